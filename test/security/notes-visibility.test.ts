import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRegistry, type LocalRegistry } from '../support/oci-images.js';
import { eventually, startStack, waitIndexed, type Stack } from '../support/stack.js';

/**
 * Issue 31, item 5: notes respect visibility. The whole product against the sandbox GitHub (which
 * reports `private` and `visibility` as GitHub does) and a real registry (Debian's
 * `docker-registry`, images pushed by skopeo with OCI labels):
 * - an image built from a private application repository is bumped in a public GitOps
 *   repository: the pull request holds no commit message, pull request title or release of it,
 *   and says "private source, not shown";
 * - a CI sender names another repository as the image's source than the image's own
 *   `org.opencontainers.image.source` label: the label wins, and the pull request says so.
 */
const SECRET = 'Rotate the payment key before the Acme deal closes';
const REAL = 'Faster greeting, from the repository the image was built from';
const DECOY = 'Commit of a repository the sender named instead';

describe('release notes respect the visibility of the source (sandbox GitHub, real registry)', () => {
  let stack: Stack;
  let registry: LocalRegistry;
  const work = mkdtempSync(join(tmpdir(), 'escalator-visibility-'));
  let web = '';
  const revisions: Record<string, { base: string; head: string }> = {};

  /** A source repository of the sandbox user with a first commit and one more carrying `message`. */
  async function source(name: string, message: string, visibility: 'public' | 'private') {
    await stack.client.createRepo({ name, files: { 'README.md': `${name}\n` }, visibility });
    const base = (await stack.user.rest.repos.getBranch({ owner: 'developer', repo: name, branch: 'main' })).data.commit
      .sha;
    const head = (await stack.client.commit(`developer/${name}`, { branch: 'main', files: { a: '1\n' }, message })).sha;
    revisions[name] = { base, head };
  }
  const labels = (name: string, revision: string) => ({
    'org.opencontainers.image.source': `http://${web}/developer/${name}`,
    'org.opencontainers.image.revision': revision,
  });

  beforeAll(async () => {
    registry = await startRegistry();
    const authFile = join(work, 'config.json');
    // A registry on the worker's loopback is read only when the file names it; this one takes anyone.
    writeFileSync(
      authFile,
      JSON.stringify({ auths: { [registry.host]: { username: 'unused', password: 'unused', owners: ['*'] } } }),
    );
    stack = await startStack({ ESCALATOR_REGISTRY_AUTH_FILE: authFile }, { name: 'visibility' });
    web = new URL(stack.sim.apiUrl).host;
    await source('payments', SECRET, 'private');
    await source('hello', REAL, 'public');
    await source('decoy', DECOY, 'public');
    await registry.push('team/payments', '1.0.0', { labels: labels('payments', revisions.payments!.base), seed: 1 });
    await registry.push('team/hello', '1.0.0', { labels: labels('hello', revisions.hello!.base), seed: 3 });
    const overlay = (image: string) => `images:\n- name: ${registry.host}/${image}\n  newTag: 1.0.0\n`;
    await stack.client.createRepo({
      name: 'gitops',
      files: {
        '.github/escalator.yml':
          'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n',
        'apps/payments/overlays/dev/kustomization.yaml': overlay('team/payments'),
        'apps/hello/overlays/dev/kustomization.yaml': overlay('team/hello'),
      },
    });
    await waitIndexed(stack, 'developer', 'gitops');
  }, 90_000);

  afterAll(async () => {
    await stack?.close();
    registry?.close();
    rmSync(work, { recursive: true, force: true });
  });

  const post = (body: Record<string, unknown>) =>
    fetch(`${stack.app.url}/api/v1/images`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.ciToken}` },
      body: JSON.stringify(body),
    });
  const pullOf = (app: string) =>
    eventually(
      async () =>
        (await stack.user.rest.pulls.list({ owner: 'developer', repo: 'gitops', state: 'open' })).data.find(
          (p) => p.title === `Bump ${app} to 1.1.0 in dev` && p.body?.includes('What changed'),
        ),
      { what: `the bump PR of ${app} with its notes`, timeoutMs: 60_000 },
    );

  it('never shows a private source in a public GitOps repository', { timeout: 90_000 }, async () => {
    const digest = await registry.push('team/payments', '1.1.0', {
      labels: labels('payments', revisions.payments!.head),
      seed: 2,
    });
    expect((await post({ repository: `${registry.host}/team/payments`, tag: '1.1.0', digest })).status).toBe(202);
    const body = (await pullOf('payments')).body ?? '';
    expect(body).not.toContain(SECRET);
    expect(body).not.toContain('developer/payments');
    expect(body).toContain('| Source | private source, not shown |');
    expect(body).toContain(`| Digest | \`${digest}\` |`);
  });

  it("follows the image's label over the sender's source, and says so", { timeout: 90_000 }, async () => {
    const digest = await registry.push('team/hello', '1.1.0', {
      labels: labels('hello', revisions.hello!.head),
      seed: 4,
    });
    const sent = `http://${web}/developer/decoy`;
    expect(
      (
        await post({
          repository: `${registry.host}/team/hello`,
          tag: '1.1.0',
          digest,
          source: sent,
          revision: revisions.decoy!.head,
        })
      ).status,
    ).toBe(202);
    const body = (await pullOf('hello')).body ?? '';
    expect(body).toContain(REAL.split(',')[0]!);
    expect(body).not.toContain(DECOY.split(' ')[0]! + ' of a repository');
    expect(body).toContain(
      `The sender named \`${sent}\` as the source, but the image's label \`org.opencontainers.image.source\` names \`http://${web}/developer/hello\`: the label wins, since the image carries it.`,
    );
  });
});
