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
  /** The first owner; the only one unless `owners` names several. */
  owner: string;
  /**
   * The owners (each its own App installation in the simulator), holding the repositories in
   * contiguous blocks of equal size: with 4 owners and 20 repositories, owner 0 holds `load-00`…`load-04`.
   */
  owners: string[];
  repos: string[];
  apps: string[];
  /** `['dev']` (registry only) or `['dev', 'staging']` (staging promoted from dev). */
  environments: Environment[];
}

export function loadFixture(input: {
  owner: string;
  /** More owners after `owner`, each an organization with its own installation of the App. */
  moreOwners?: string[];
  repos: number;
  apps: number;
  environments: Environment[];
}): LoadFixture {
  return {
    owner: input.owner,
    owners: [input.owner, ...(input.moreOwners ?? [])],
    repos: Array.from({ length: input.repos }, (_, r) => `load-${String(r).padStart(2, '0')}`),
    apps: Array.from({ length: input.apps }, (_, a) => `app-${String(a).padStart(2, '0')}`),
    environments: input.environments,
  };
}

/** The owner of a repository of the fixture (repository names are unique across owners). */
export function ownerOf(fixture: LoadFixture, repo: string): string {
  const index = fixture.repos.indexOf(repo);
  if (index < 0) throw new Error(`${repo} is not a repository of the load fixture`);
  const perOwner = Math.ceil(fixture.repos.length / fixture.owners.length);
  return fixture.owners[Math.floor(index / perOwner)]!;
}

export function imageOf(repo: string, app: string): string {
  return `ghcr.io/load/${repo}-${app}`;
}

/** Every (repository, app, image) of the fixture, in a stable order. */
export function targetsOf(fixture: LoadFixture): Array<{ owner: string; repo: string; app: string; image: string }> {
  return fixture.repos.flatMap((repo) =>
    fixture.apps.map((app) => ({ owner: ownerOf(fixture, repo), repo, app, image: imageOf(repo, app) })),
  );
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
