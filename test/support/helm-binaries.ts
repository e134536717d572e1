/**
 * The real helm binaries the Helm tests run: helm 3.17 and helm 4.1, unpacked by
 * scripts/fetch-helm.sh into .cache/tools/helm-<version>/helm (CI runs it in .ci/run). The tests
 * require them rather than skip: a Helm test that silently did not run proves nothing.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

export const HELM_VERSIONS = ['3.17', '4.1'] as const;
export type HelmVersion = (typeof HELM_VERSIONS)[number];

/** The path of one helm binary, or an error that says how to get it. */
export function helmBinary(version: HelmVersion): string {
  const path = join(ROOT, '.cache/tools', `helm-${version}`, 'helm');
  if (!existsSync(path))
    throw new Error(
      `helm ${version} is not at ${path}: run scripts/fetch-helm.sh ${version} first (CI runs scripts/fetch-helm.sh 3.17 4.1 in .ci/run)`,
    );
  return path;
}
