import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseRepoConfig } from '../../src/config/repo-config.js';

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
});
