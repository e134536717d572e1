/**
 * The GitOps repositories the chaos run seeds, and the exact bytes their files must hold for a
 * given image version: the expected state is computed from the events, not from a second run.
 *
 * Three repositories × two apps. `api` uses one image shared by every repository (one event fans
 * out to three bump jobs); `web` uses an image of its own per repository. dev takes images from
 * the registry and merges its bump PRs itself; staging is promoted from dev by pull requests that
 * a person merges.
 */

export const owner = 'developer';
export const repos = ['alpha', 'beta', 'gamma'] as const;
export const apps = ['api', 'web'] as const;
export type Repo = (typeof repos)[number];
export type App = (typeof apps)[number];
export type Environment = 'dev' | 'staging';

/** The image an app of a repository runs. */
export function imageOf(repo: Repo, app: App): string {
  return app === 'api' ? 'ghcr.io/chaos/api' : `ghcr.io/chaos/${repo}-web`;
}

/** Every distinct image, in a stable order. */
export const images: string[] = [...new Set(repos.flatMap((repo) => apps.map((app) => imageOf(repo, app))))];

/** The tag of the `n`th version of an image: `1.n.0` (semver, increasing with n). */
export function tagOf(n: number): string {
  return `1.${n}.0`;
}

/** The version number `n` of a tag made by {@link tagOf}. */
export function versionOf(tag: string): number {
  const match = /^1\.(\d+)\.0$/.exec(tag);
  if (!match) throw new Error(`tag ${tag} was not made by tagOf()`);
  return Number(match[1]);
}

export const initialVersion = 0;

export function overlayPath(app: App, environment: Environment): string {
  return `apps/${app}/overlays/${environment}/kustomization.yaml`;
}

/** An environment's overlay at one tag: the exact bytes Escalator must produce. */
export function overlayText(image: string, tag: string): string {
  return [
    'apiVersion: kustomize.config.k8s.io/v1beta1',
    'kind: Kustomization',
    'resources:',
    '  - ../../base',
    'images:',
    `  - name: ${image} # bumped by Escalator`,
    `    newTag: ${tag}`,
    '',
  ].join('\n');
}

export function configText(repo: Repo): string {
  const policies = [...new Set(apps.map((app) => imageOf(repo, app)))].map(
    (image) => `  - {name: ${image}, policy: semver}`,
  );
  return [
    'environments:',
    '  - name: dev',
    '    paths: ["apps/*/overlays/dev"]',
    '    from: registry',
    '    autoMerge: true',
    '  - name: staging',
    '    paths: ["apps/*/overlays/staging"]',
    '    from: dev',
    'images:',
    ...policies,
    '',
  ].join('\n');
}

/** The files of one repository at the start. */
export function repoFiles(repo: Repo): Record<string, string> {
  const files: Record<string, string> = {
    '.github/escalator.yml': configText(repo),
    'notes/README.md': 'Notes people add by pull request.\n',
  };
  for (const app of apps) {
    const image = imageOf(repo, app);
    files[`apps/${app}/base/kustomization.yaml`] = 'resources:\n  - deployment.yaml\n';
    files[`apps/${app}/base/deployment.yaml`] =
      `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ${app}}\nspec:\n  selector: {matchLabels: {app: ${app}}}\n  template:\n    metadata: {labels: {app: ${app}}}\n    spec:\n      containers:\n        - name: ${app}\n          image: ${image}\n`;
    for (const environment of ['dev', 'staging'] as const)
      files[overlayPath(app, environment)] = overlayText(image, tagOf(initialVersion));
  }
  return files;
}
