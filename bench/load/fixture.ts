/**
 * The GitOps repositories the load runs seed (bench/soak.ts, bench/burst.ts), and the exact bytes
 * a file must hold for a given image version, so the expected end state is computed, not re-run.
 *
 * `repos` repositories × `apps` apps; every app runs an image of its own
 * (`ghcr.io/load/<repo>-<app>`), so one event concerns exactly one (repository, app). Each app has
 * a base (a Deployment and a ConfigMap people edit in their own pull requests) and one overlay per
 * environment. Overlays and tags are the chaos fixture's (bench/chaos/fixture.ts): `1.n.0`.
 */
import { overlayText, tagOf } from '../chaos/fixture.js';

export { overlayText, tagOf, versionOf } from '../chaos/fixture.js';

export type Environment = 'dev' | 'staging';

export interface LoadFixture {
  owner: string;
  repos: string[];
  apps: string[];
  /** `['dev']` (registry only) or `['dev', 'staging']` (staging promoted from dev). */
  environments: Environment[];
}

export function loadFixture(input: {
  owner: string;
  repos: number;
  apps: number;
  environments: Environment[];
}): LoadFixture {
  return {
    owner: input.owner,
    repos: Array.from({ length: input.repos }, (_, r) => `load-${String(r).padStart(2, '0')}`),
    apps: Array.from({ length: input.apps }, (_, a) => `app-${String(a).padStart(2, '0')}`),
    environments: input.environments,
  };
}

export function imageOf(repo: string, app: string): string {
  return `ghcr.io/load/${repo}-${app}`;
}

/** Every (repository, app, image) of the fixture, in a stable order. */
export function targetsOf(fixture: LoadFixture): Array<{ repo: string; app: string; image: string }> {
  return fixture.repos.flatMap((repo) => fixture.apps.map((app) => ({ repo, app, image: imageOf(repo, app) })));
}

export function overlayPath(app: string, environment: Environment): string {
  return `apps/${app}/overlays/${environment}/kustomization.yaml`;
}

export function settingsPath(app: string): string {
  return `apps/${app}/base/settings.yaml`;
}

/** The ConfigMap people change in their pull requests (the rendered diff shows it). */
export function settingsText(app: string, revision: number): string {
  return `apiVersion: v1\nkind: ConfigMap\nmetadata: {name: ${app}-settings}\ndata:\n  revision: "${revision}"\n`;
}

export function configText(fixture: LoadFixture, repo: string): string {
  const lines = ['environments:', '  - name: dev', '    paths: ["apps/*/overlays/dev"]', '    from: registry'];
  if (fixture.environments.includes('staging'))
    lines.push('  - name: staging', '    paths: ["apps/*/overlays/staging"]', '    from: dev');
  lines.push('images:', ...fixture.apps.map((app) => `  - {name: ${imageOf(repo, app)}, policy: semver}`), '');
  return lines.join('\n');
}

/** The files of one repository at the start: every overlay at `1.0.0`. */
export function repoFiles(fixture: LoadFixture, repo: string): Record<string, string> {
  const files: Record<string, string> = { '.github/escalator.yml': configText(fixture, repo) };
  for (const app of fixture.apps) {
    const image = imageOf(repo, app);
    files[`apps/${app}/base/kustomization.yaml`] = 'resources:\n  - deployment.yaml\n  - settings.yaml\n';
    files[`apps/${app}/base/deployment.yaml`] =
      `apiVersion: apps/v1\nkind: Deployment\nmetadata: {name: ${app}}\nspec:\n  selector: {matchLabels: {app: ${app}}}\n  template:\n    metadata: {labels: {app: ${app}}}\n    spec:\n      containers:\n        - name: ${app}\n          image: ${image}\n`;
    files[settingsPath(app)] = settingsText(app, 0);
    for (const environment of fixture.environments) files[overlayPath(app, environment)] = overlayText(image, tagOf(0));
  }
  return files;
}
