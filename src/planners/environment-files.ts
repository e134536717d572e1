import { isKustomizationPath } from './kustomize/index.js';
import { matchPathPattern } from './path-pattern.js';

/** One YAML file an environment owns, and the app its path binds (`''` when the path has no `*`). */
export interface EnvironmentFile {
  environment: string;
  app: string;
  path: string;
}

const yamlFile = /\.ya?ml$/i;

/**
 * Map a repository's file list onto the environments that own each file. Which images an
 * environment uses is discovered from these files, so adding an app needs no config change.
 * Helm chart `templates/` are skipped: they are Go templates, not YAML, until rendered.
 */
export function planEnvironmentFiles(
  config: { environments: ReadonlyArray<{ name: string; paths: readonly string[] }> },
  paths: readonly string[],
): EnvironmentFile[] {
  const files: EnvironmentFile[] = [];
  for (const path of paths) {
    if (
      !(yamlFile.test(path) || isKustomizationPath(path)) ||
      /(^|\/)templates\//.test(path) ||
      path.startsWith('.github/')
    )
      continue;
    for (const environment of config.environments) {
      for (const pattern of environment.paths) {
        const match = matchPathPattern(pattern, path);
        if (match) {
          files.push({ environment: environment.name, app: match.app ?? '', path });
          break;
        }
      }
    }
  }
  return files.sort((a, b) =>
    a.path < b.path ? -1 : a.path > b.path ? 1 : a.environment.localeCompare(b.environment),
  );
}
