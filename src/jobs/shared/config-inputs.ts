import type { WaitingChange } from '../../adapters/store/config-changes.js';
import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import {
  planConfigCarry,
  renderConfigSection,
  type CarriedChange,
  type LoadedChange,
} from '../../planners/config-carry.js';
import { refusedFile } from '../../planners/config-promote/index.js';
import { targetFolder } from '../../planners/config-routes.js';
import type { EnvFile } from '../../planners/promotion-plan.js';
import type { JobDeps } from './deps.js';
import { loadFilesAt, type FileSource } from './indexed-files.js';

type Environment = NonNullable<RepoIndex['config']>['environments'][number];

/** The configuration part of a promotion of one app: what it writes, and what became of each waiting change. */
export interface AppConfigCarry {
  app: string;
  updates: Array<{ path: string; content: string }>;
  deletions: string[];
  changes: CarriedChange[];
}

/**
 * Waiting configuration changes of (target, app) planned against the target's files at `sha`
 * (docs/configuration.md, "Promote configuration"): X's files before and after each change (its
 * merge's first parent and merge commit) and Y's files now, read through the GitHub adapter, in
 * the order the changes landed. Shared by the promotion job and `/escalator plan`.
 */
export async function loadConfigCarry(
  deps: JobDeps,
  files: FileSource,
  target: Environment,
  app: string,
  sha: string,
  waiting?: WaitingChange[],
): Promise<AppConfigCarry | undefined> {
  const entries = waiting ?? (await deps.store.configChanges.list(files.index, target.name, app));
  const mine = entries.filter((entry) => entry.app === app);
  if (mine.length === 0) return undefined;
  const result: AppConfigCarry = { app, updates: [], deletions: [], changes: [] };
  // Changes from different paths of the source land in different folders here: planned folder by folder.
  const byPath = new Map<number, WaitingChange[]>();
  for (const entry of mine) byPath.set(entry.change.pathIndex, [...(byPath.get(entry.change.pathIndex) ?? []), entry]);
  for (const [pathIndex, group] of byPath) {
    const pattern = target.paths[pathIndex];
    const folder = pattern === undefined ? undefined : targetFolder(pattern, app);
    if (folder === undefined) {
      // The configuration changed since (validated: this cannot come from a valid one): said as refused.
      for (const entry of group)
        result.changes.push({
          change: entry.change,
          outcome: 'blocked',
          files: entry.change.files.map((path) =>
            refusedFile(
              path,
              `${target.name} has no folder for ${app || 'this app'} at paths[${pathIndex}]; check its paths in .github/escalator.yml`,
            ),
          ),
        });
      continue;
    }
    const relative = [...new Set(group.flatMap((entry) => entry.change.files))].sort();
    const now = await loadFilesAt(
      files,
      relative.map((path) => `${folder}/${path}`),
      sha,
    );
    const targetFiles = new Map(now.map((file) => [file.path.slice(folder.length + 1), file.text]));
    const loaded: LoadedChange[] = [];
    for (const entry of group) {
      const { change } = entry;
      const paths = change.files.map((path) => `${change.folder}/${path}`);
      const before = textsOf(await loadFilesAt(files, paths, change.parentSha, change.blobs?.before), change.folder);
      const after = textsOf(await loadFilesAt(files, paths, change.mergeSha, change.blobs?.after), change.folder);
      loaded.push({
        change,
        files: change.files.map((path) => ({ path, before: before.get(path), after: after.get(path) })),
      });
    }
    const plan = planConfigCarry({ targetFolder: folder, targetFiles, changes: loaded });
    result.updates.push(...plan.updates);
    result.deletions.push(...plan.deletions);
    result.changes.push(...plan.changes);
  }
  return result;
}

function textsOf(files: EnvFile[], folder: string): Map<string, string> {
  return new Map(files.map((file) => [file.path.slice(folder.length + 1), file.text]));
}

/**
 * The configuration input of a promotion: the apps' carries together, and the target's files with
 * what they write (image edits go on top). Undefined when nothing waits.
 */
export function configInput(
  carries: ReadonlyArray<AppConfigCarry | undefined>,
  names: { source: string; target: string; app: string },
):
  | {
      updates: Array<{ path: string; content: string }>;
      deletions: string[];
      ids: string[];
      carried: number;
      section: string[];
    }
  | undefined {
  const present = carries.filter((carry): carry is AppConfigCarry => carry !== undefined);
  if (present.length === 0) return undefined;
  const changes = present.flatMap((carry) => carry.changes);
  return {
    updates: present.flatMap((carry) => carry.updates),
    deletions: present.flatMap((carry) => carry.deletions),
    ids: [...new Set(changes.filter((c) => c.outcome !== 'in-place').map((c) => c.change.id))],
    carried: changes.filter((c) => c.outcome === 'carried').length,
    section: renderConfigSection({ ...names, changes }),
  };
}

/** The target's files as the configuration changes leave them. */
export function withConfig(files: EnvFile[], carry: AppConfigCarry | undefined): EnvFile[] {
  if (!carry) return files;
  const deleted = new Set(carry.deletions);
  const written = new Map(carry.updates.map((update) => [update.path, update.content]));
  return files
    .filter((file) => !deleted.has(file.path))
    .map((file) => (written.has(file.path) ? { path: file.path, text: written.get(file.path) as string } : file));
}
