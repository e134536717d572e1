import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRepoConfig } from '../../src/config/repo-config.js';
import { planPromotion, readVersions, type EnvFile } from '../../src/planners/promotion-plan.js';

const root = join(import.meta.dirname, '../../examples/gitops-repo');
const overlays = ['hello', 'world'].flatMap((app) =>
  ['dev', 'staging', 'prod'].map((env) => `apps/${app}/overlays/${env}`),
);

describe('the example GitOps repository', () => {
  it('has a valid .github/escalator.yml', () => {
    const result = parseRepoConfig(readFileSync(join(root, '.github/escalator.yml'), 'utf8'));
    expect(result.ok ? result.config.environments.map((e) => [e.name, e.from]) : result.problems).toEqual([
      ['dev', 'registry'],
      ['staging', 'dev'],
      ['prod', 'staging'],
    ]);
  });

  it.each(overlays)('%s sets its image with one flow-style images entry and builds with kustomize', (overlay) => {
    const text = readFileSync(join(root, overlay, 'kustomization.yaml'), 'utf8');
    expect(text).toMatch(/^images:\n {2}- \{name: ghcr\.io\/example\/(hello|world), newTag: [^}]+\}/m);
    const rendered = execFileSync('kubectl', ['kustomize', join(root, overlay)], { encoding: 'utf8' });
    expect(rendered).toContain('kind: Deployment');
    const image = /image: (\S+)/.exec(rendered)?.[1] ?? '';
    // hello pins digests (pinDigest: true) in every environment; world is promoted by tag.
    expect(image).toMatch(overlay.includes('/hello/') ? /:\d+\.\d+\.\d+@sha256:[0-9a-f]{64}$/ : /:\d+\.\d+\.\d+$/);
  });

  it('pins digests the same way in every environment of an image, so promotions and rollbacks have one to write', () => {
    // A promotion into a pinned file needs a digest from its source, and a rollback needs one on
    // record for the version it goes back to: a pin in one environment and not another would
    // make the first promotion or rollback a refusal.
    const config = parseRepoConfig(readFileSync(join(root, '.github/escalator.yml'), 'utf8'));
    if (!config.ok) throw new Error('invalid example config');
    for (const app of ['hello', 'world']) {
      const pins = ['dev', 'staging', 'prod'].map((env) =>
        /digest: sha256:[0-9a-f]{64}/.test(
          readFileSync(join(root, `apps/${app}/overlays/${env}/kustomization.yaml`), 'utf8'),
        ),
      );
      const pinDigest = config.config.images.find((image) => image.name === `ghcr.io/example/${app}`)?.pinDigest;
      expect({ app, pins }).toEqual({ app, pins: [pinDigest, pinDigest, pinDigest] });
    }
  });

  const files = (app: string, env: string): EnvFile[] => {
    const path = `apps/${app}/overlays/${env}/kustomization.yaml`;
    return [{ path, text: readFileSync(join(root, path), 'utf8') }];
  };

  it('the first plan refuses nothing: every promotion of the seed can be written', () => {
    for (const [source, target] of [
      ['dev', 'staging'],
      ['staging', 'prod'],
    ] as const)
      for (const app of ['hello', 'world']) {
        const plan = planPromotion({
          source,
          target,
          app,
          apps: [{ app, sourceFiles: files(app, source), targetFiles: files(app, target) }],
        });
        expect({ source, target, app, refused: plan.refused }).toEqual({ source, target, app, refused: [] });
      }
  });

  it('the first automatic rollback can be written: staging goes back to its seeded 1.0.0 with its digest', () => {
    // As in the sandbox's printed steps: hello 1.1.0 (digest abab…) is bumped in dev and promoted to staging.
    const seeded = files('hello', 'staging');
    const promoted = planPromotion({
      source: 'dev',
      target: 'staging',
      app: 'hello',
      apps: [
        {
          app: 'hello',
          sourceFiles: [],
          targetFiles: seeded,
          versions: new Map([
            [
              'ghcr.io/example/hello',
              {
                name: 'ghcr.io/example/hello',
                repository: 'ghcr.io/example/hello',
                tag: '1.1.0',
                digest: `sha256:${'ab'.repeat(32)}`,
              },
            ],
          ]),
        },
      ],
    });
    expect(promoted.refused).toEqual([]);
    const staging = promoted.updates.map((update) => ({ path: update.path, text: update.content }));
    // Rolled back to what staging ran before (the history keeps what the seeded file says).
    const rollback = planPromotion({
      source: 'staging (history)',
      target: 'staging',
      app: 'hello',
      apps: [{ app: 'hello', sourceFiles: [], targetFiles: staging, versions: readVersions(seeded) }],
      rollback: { source: 'dev' },
    });
    expect(rollback.refused).toEqual([]);
    expect(rollback.title).toBe('Roll back hello in staging: 1.1.0 → 1.0.0');
    expect(rollback.updates).toEqual([{ path: seeded[0]!.path, content: seeded[0]!.text }]);
  });
});
