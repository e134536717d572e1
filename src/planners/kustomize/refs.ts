import { resolvePath } from '../repo-path.js';
import { foldKey, isRemoteReference, type FieldRef, type KustomizationReads } from './reads.js';

/**
 * Where a kustomization's reference lands, from the kustomization's directory: a repository path
 * (a file, or a directory standing for the kustomization in it), or why it is no path of the
 * checkout. `remote`: kustomize would fetch or clone it ({@link isRemoteReference}); `outside`:
 * absolute, or `..` past the repository's root.
 */
export type Landing = { kind: 'local'; path: string } | { kind: 'remote' } | { kind: 'outside' };

/** Where `ref`, written in a kustomization of `dir`, lands (lexically: symbolic links are the caller's). */
export function landReference(dir: string, ref: string): Landing {
  if (isRemoteReference(ref)) return { kind: 'remote' };
  const path = resolvePath(dir, ref);
  return path === undefined ? { kind: 'outside' } : { kind: 'local', path };
}

/**
 * A `patchesStrategicMerge` entry that is a patch written inline (a block, or a one-line flow
 * mapping such as `{kind: Deployment, …}`) rather than a file's path.
 */
export function isInlinePatch(entry: string): boolean {
  return entry.includes('\n') || (/[:{]/.test(entry) && !isRemoteReference(entry));
}

/** `patches[i].path` (field names folded as kustomize matches them), not `patchesJson6902` or `replacements`. */
const PATCH_PATH = /^patches\[\d+\]\.path$/;

/**
 * The references whose objects kustomize renders through this kustomization: `resources`,
 * `bases`, `components`, and the patch files (`patchesStrategicMerge` files and `patches[].path`),
 * whose objects are merged into what renders. The other path-valued fields (generator sources,
 * CRDs, configurations, values files, replacements) are read, not rendered as written.
 */
export function renderedReferences(reads: KustomizationReads): FieldRef[] {
  return [
    ...reads.resources,
    ...reads.strategicMerge.filter((ref) => !isInlinePatch(ref.value)),
    ...reads.files.filter((ref) => PATCH_PATH.test(foldKey(ref.field))),
  ];
}
