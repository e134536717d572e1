/**
 * Versions an environment runs, keyed by (environment, app): the one spelling of that key and of a
 * version's identity, shared by indexing, promotion, drift and commands. Pure.
 */

/** One image's version as an environment file pins it. */
export interface PinnedVersion {
  name: string;
  tag: string;
  digest?: string;
}

/** The identity of a version: `name:tag` or `name:tag@digest`. */
export function versionId(version: PinnedVersion): string {
  return `${version.name}:${version.tag}${version.digest ? `@${version.digest}` : ''}`;
}

/** The key of one (environment, app): the two names joined by a character neither can hold. */
export function targetKey(environment: string, app: string): string {
  return `${environment}\u0000${app}`;
}

/** The (environment, app) of a `targetKey`. */
export function parseTargetKey(key: string): { environment: string; app: string } {
  const at = key.indexOf('\u0000');
  return { environment: key.slice(0, at), app: key.slice(at + 1) };
}

/** Versions per `targetKey`, sorted by image name, so two indexes compare by value. The first file of a target naming an image wins. */
export function versionsByTarget<V extends PinnedVersion>(
  files: ReadonlyArray<{ environment: string; app: string; versions?: readonly V[] }>,
): Map<string, V[]> {
  const targets = new Map<string, Map<string, V>>();
  for (const file of files) {
    const key = targetKey(file.environment, file.app);
    const versions = targets.get(key) ?? new Map<string, V>();
    for (const version of file.versions ?? []) if (!versions.has(version.name)) versions.set(version.name, version);
    targets.set(key, versions);
  }
  return new Map(
    [...targets].map(([key, versions]) => [key, [...versions.values()].sort((a, b) => a.name.localeCompare(b.name))]),
  );
}
