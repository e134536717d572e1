import { dirname } from '../repo-path.js';

/**
 * The file names kustomize takes for a directory's kustomization, in its order (kustomize's
 * `konfig.RecognizedKustomizationFileNames`). A directory holding more than one is refused by
 * kustomize ("Found multiple kustomization files under: <dir>", checked with `kubectl kustomize`
 * v5.5.0), so neither is built.
 */
export const KUSTOMIZATION_NAMES = ['kustomization.yaml', 'kustomization.yml', 'Kustomization'] as const;

/**
 * Whether a repository path's file name is one kustomize takes for a kustomization. Paths are
 * `/`-separated: on the systems kustomize builds on, `\\` is a character of a file name.
 */
export function isKustomizationPath(path: string): boolean {
  const name = path.slice(path.lastIndexOf('/') + 1);
  return (KUSTOMIZATION_NAMES as readonly string[]).includes(name);
}

/** The paths a directory's kustomization may have, in kustomize's order. */
export function kustomizationPaths(dir: string): string[] {
  return KUSTOMIZATION_NAMES.map((name) => (dir === '' ? name : `${dir}/${name}`));
}

/** The kustomization file of a directory among `files`, if it has one (the first in kustomize's order). */
export function kustomizationFile(files: ReadonlySet<string>, dir: string): string | undefined {
  return kustomizationPaths(dir).find((path) => files.has(path));
}

/**
 * For each kustomization among `paths` that shares its directory with another one
 * (`kustomization.yaml` beside `kustomization.yml` or `Kustomization`), the others. kustomize
 * refuses to build such a directory, so the editor refuses them too (`EditOptions.siblings`)
 * instead of editing both.
 */
export function kustomizationSiblings(paths: Iterable<string>): Map<string, string[]> {
  const byDir = new Map<string, string[]>();
  for (const path of paths) {
    if (!isKustomizationPath(path)) continue;
    const dir = dirname(path);
    byDir.set(dir, [...(byDir.get(dir) ?? []), path]);
  }
  const siblings = new Map<string, string[]>();
  for (const list of byDir.values())
    if (list.length > 1)
      for (const path of list)
        siblings.set(
          path,
          list.filter((other) => other !== path),
        );
  return siblings;
}
