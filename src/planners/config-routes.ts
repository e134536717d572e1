/**
 * Where configuration travels (docs/configuration.md, "Promote configuration"): which files of a
 * merged change belong to which (environment, app), which environments take that change next,
 * and where the same file lives in each of them. Pure: paths and the configuration in, routes out.
 *
 * An environment path names one folder per app (`apps/*\/overlays/dev`); a file's place in the
 * environment is its path below that folder (`patches/env.yaml`), and the same relative path in
 * the next environment's folder for the same app is its counterpart. Path `i` of an environment
 * pairs with path `i` of the environment it promotes from.
 */
import { compilePathPattern } from './path-pattern.js';

/** What the routing reads of an environment. */
export interface RoutedEnvironment {
  name: string;
  from: string;
  paths: readonly string[];
  promote?: { config: boolean; include: readonly string[]; exclude: readonly string[] } | undefined;
}

/** One app's part of a merged change in one environment. */
export interface ChangedFolder {
  /** The environment the change landed in (X). */
  environment: string;
  app: string;
  /** Which of X's paths matched (it pairs with the same index in the next environment). */
  pathIndex: number;
  /** X's folder for the app: `apps/hello/overlays/dev`. */
  folder: string;
  /** Changed files, relative to `folder`, sorted. */
  files: string[];
}

/** A route for a change: from X's folder into each environment Y that takes it (Y.from = X, `promote.config`). */
export interface ConfigRoute extends ChangedFolder {
  /** The environment that takes it (Y). */
  target: string;
  /** `files` narrowed by Y's include and exclude. */
  files: string[];
}

const FILE_NAME = /(\.ya?ml|(^|\/)Kustomization)$/i;

function segmentsOf(pattern: string): string[] {
  return pattern.split('/').filter((segment) => segment !== '');
}

/**
 * Why a path pattern of an environment cannot carry configuration, or undefined. `target`: the
 * environment the configuration goes into, whose folder is built from the app's name, so every
 * segment but the app's `*` must be written out.
 */
export function folderPatternProblem(pattern: string, target: boolean): string | undefined {
  const segments = segmentsOf(pattern);
  if (segments.includes('**'))
    return `path ${JSON.stringify(pattern)} has "**": configuration promotion needs one folder per app, like apps/*/overlays/dev`;
  if (FILE_NAME.test(segments.at(-1) ?? ''))
    return `path ${JSON.stringify(pattern)} names a file: configuration is promoted between folders (apps/*/overlays/dev), where each file has a counterpart`;
  if (!target) return undefined;
  const stars = segments.filter((segment) => segment.includes('*')).length;
  const wild = segments.some((segment) => /[?[\]{}]/.test(segment));
  if (stars > 1 || wild)
    return `path ${JSON.stringify(pattern)} has wildcards besides the app's "*": Escalator cannot tell which folder of this environment is the app's`;
  return undefined;
}

/** The folder of `app` in a target pattern (`apps/*\/overlays/staging`, `hello` → `apps/hello/overlays/staging`). */
export function targetFolder(pattern: string, app: string): string | undefined {
  if (folderPatternProblem(pattern, true) !== undefined) return undefined;
  const segments = segmentsOf(pattern);
  if (app === '') return segments.some((s) => s.includes('*')) ? undefined : segments.join('/');
  if (app.includes('/') || app === '.' || app === '..') return undefined;
  return segments.map((segment) => segment.replace('*', app)).join('/');
}

/**
 * The changed paths of a merge as folders of (environment, app): a path below one of an
 * environment's folder patterns (not the folder itself, nor a file pattern) counts.
 */
export function changedFolders(environments: readonly RoutedEnvironment[], paths: readonly string[]): ChangedFolder[] {
  const found = new Map<string, ChangedFolder>();
  for (const path of paths) {
    for (const environment of environments) {
      let matched = false;
      environment.paths.forEach((pattern, pathIndex) => {
        if (matched || folderPatternProblem(pattern, false) !== undefined) return;
        const match = compilePathPattern(pattern).match(path);
        if (!match) return;
        const depth = segmentsOf(pattern).length;
        const parts = segmentsOf(path);
        if (parts.length <= depth) return;
        matched = true;
        const folder = parts.slice(0, depth).join('/');
        const app = match.app ?? '';
        const key = `${environment.name}\n${app}\n${folder}`;
        const entry = found.get(key) ?? { environment: environment.name, app, pathIndex, folder, files: [] };
        entry.files.push(parts.slice(depth).join('/'));
        found.set(key, entry);
      });
      if (matched) break;
    }
  }
  return [...found.values()]
    .map((entry) => ({ ...entry, files: [...new Set(entry.files)].sort() }))
    .sort((a, b) => `${a.environment}\n${a.app}`.localeCompare(`${b.environment}\n${b.app}`));
}

/** Whether an environment promotes configuration: the index then keeps what each head changed, for its landing. */
export function promotesConfig(environments: readonly RoutedEnvironment[] | undefined): boolean {
  return environments?.some((env) => env.promote?.config === true) ?? false;
}

/** Whether a relative path travels into an environment with these include and exclude patterns. */
export function travels(
  promote: { include: readonly string[]; exclude: readonly string[] },
  relative: string,
): boolean {
  const hit = (patterns: readonly string[]) =>
    patterns.some((pattern) => compilePathPattern(pattern).match(relative) !== null);
  return (promote.include.length === 0 || hit(promote.include)) && !hit(promote.exclude);
}

/**
 * Where the changed folders go next: each environment Y with `from: X` and `promote.config`
 * takes the files its include and exclude let through; a folder none of them takes has no route.
 */
export function planConfigRoutes(
  environments: readonly RoutedEnvironment[],
  folders: readonly ChangedFolder[],
): ConfigRoute[] {
  const routes: ConfigRoute[] = [];
  for (const folder of folders)
    for (const target of environments) {
      if (target.from !== folder.environment || target.promote?.config !== true) continue;
      const files = folder.files.filter((file) => travels(target.promote!, file));
      if (files.length > 0) routes.push({ ...folder, target: target.name, files });
    }
  return routes;
}
