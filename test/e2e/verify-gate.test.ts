import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRegistry, type LocalRegistry } from '../support/oci-images.js';
import {
  ACTIONS_ISSUER as ISSUER,
  cosignSign,
  generateKey,
  pushBundle,
  releaseProvenance,
  RELEASE_WORKFLOW as RELEASE,
  SigstoreMock,
} from '../support/signing.js';
import { eventually, postImage, readFile, startStack, waitIndexed, type Stack } from '../support/stack.js';

const COMMIT = 'feed'.padEnd(40, '1');
const PREDICATE = releaseProvenance(COMMIT);

/**
 * Verify before you promote, end to end: the sandbox GitHub, real Redis, Debian's
 * `docker-registry` and a test Fulcio and Rekor. dev takes every image; prod demands SLSA
 * provenance signed by the release workflow. An unsigned version reaches dev and stops at prod
 * with a failing `escalator/verify` that says why; the signed one is promoted and its pull
 * request says who signed it.
 */
describe('the verification gate (dev without a policy, prod requiring the release workflow)', () => {
  let stack: Stack;
  let registry: LocalRegistry;
  let sigstore: SigstoreMock;
  let owner = '';
  const repo = 'gitops';
  const work = mkdtempSync(join(tmpdir(), 'escalator-verify-'));
  let image = '';

  beforeAll(async () => {
    registry = await startRegistry();
    sigstore = new SigstoreMock();
    await sigstore.start();
    writeFileSync(join(work, 'test-root.json'), JSON.stringify(sigstore.trustedRoot()));
    // The operator names the loopback registry (so it is read, over plain HTTP); it asks for no credential.
    writeFileSync(
      join(work, 'config.json'),
      JSON.stringify({
        auths: { [registry.host]: { auth: Buffer.from('ci:unused').toString('base64'), owners: ['*'] } },
      }),
    );
    stack = await startStack({
      ESCALATOR_REGISTRY_AUTH_FILE: join(work, 'config.json'),
      ESCALATOR_SIGSTORE_TRUSTED_ROOTS: work,
    });
    image = `${registry.host}/team/app`;
    const running = await registry.push('team/app', '1.0.0', { seed: 1 });
    const overlay = (tag: string, digest: string) =>
      `images:\n  - name: ${image}\n    newTag: ${tag}\n    digest: ${digest}\n`;
    const created = await stack.client.createRepo({
      name: repo,
      files: {
        '.github/escalator.yml': [
          'environments:',
          '  - name: dev',
          '    paths: ["apps/*/overlays/dev"]',
          '    from: registry',
          '  - name: prod',
          '    paths: ["apps/*/overlays/prod"]',
          '    from: dev',
          '    verify:',
          '      signers:',
          `        - issuer: ${ISSUER}`,
          `          subject: ${RELEASE}`,
          '          repository: acme/hello',
          '      trustedRoot: test-root',
          '      provenance: true',
          '',
        ].join('\n'),
        'apps/app/overlays/dev/kustomization.yaml': overlay('1.0.0', running),
        'apps/app/overlays/prod/kustomization.yaml': overlay('1.0.0', running),
      },
    });
    owner = created.full_name.split('/')[0] as string;
    await waitIndexed(stack, owner, repo);
  }, 90_000);

  afterAll(async () => {
    await stack?.close();
    registry?.close();
    sigstore?.close();
    rmSync(work, { recursive: true, force: true });
  });

  const openPull = (branch: string, tag: string) =>
    eventually(
      async () =>
        (await stack.user.rest.pulls.list({ owner, repo, state: 'open' })).data.find(
          (p) => p.head.ref === branch && p.title.includes(tag),
        ),
      { what: `an open PR on ${branch} for ${tag}`, timeoutMs: 60_000 },
    );
  const checkOn = (ref: string, name: string) =>
    eventually(
      async () => (await stack.user.rest.checks.listForRef({ owner, repo, ref, check_name: name })).data.check_runs[0],
      { what: `${name} on ${ref}`, timeoutMs: 60_000 },
    );

  it('lets an unsigned version into dev and stops it at prod, saying why', { timeout: 150_000 }, async () => {
    const digest = await registry.push('team/app', '1.1.0', { seed: 2 });
    expect((await postImage(stack, `${image}:1.1.0@${digest}`)).status).toBe(202);
    const dev = await openPull('escalator/dev/app', '1.1.0');
    await stack.client.mergePull(`${owner}/${repo}`, dev.number);
    const main = (await stack.user.rest.repos.getBranch({ owner, repo, branch: 'main' })).data.commit.sha;
    const refused = await checkOn(main, 'escalator/verify escalator/promote/prod/app');
    expect(refused.conclusion).toBe('failure');
    expect(refused.output.title).toBe('verify: 1 image not written into prod');
    expect(refused.output.summary).toContain('- no Sigstore bundle among the referrers of this digest');
    expect(refused.output.summary).toContain('**What to do**');
    // Nothing was written into prod.
    const open = (await stack.user.rest.pulls.list({ owner, repo, state: 'open' })).data;
    expect(open.filter((p) => p.head.ref.startsWith('escalator/promote/prod'))).toEqual([]);
    expect(await readFile(stack, owner, repo, 'apps/app/overlays/prod/kustomization.yaml', 'main')).toContain(
      'newTag: 1.0.0',
    );
  });

  it('promotes the version the release workflow attested, and shows who signed it', { timeout: 150_000 }, async () => {
    const digest = await registry.push('team/app', '1.2.0', { seed: 3, platforms: ['linux/amd64', 'linux/arm64'] });
    const bundle = await sigstore.attest([digest], 'https://slsa.dev/provenance/v1', PREDICATE, {
      sub: RELEASE,
      repository: 'acme/hello',
      sha: COMMIT,
      ref: 'refs/heads/main',
      workflow_ref: 'acme/hello/.github/workflows/release.yml@refs/heads/main',
    });
    await pushBundle(registry.host, 'team/app', digest, bundle);
    expect((await postImage(stack, `${image}:1.2.0@${digest}`)).status).toBe(202);
    const dev = await openPull('escalator/dev/app', '1.2.0');
    await stack.client.mergePull(`${owner}/${repo}`, dev.number);
    const prod = await openPull('escalator/promote/prod/app', '1.2.0');
    // The index digest is what was verified and what is written.
    expect(await readFile(stack, owner, repo, 'apps/app/overlays/prod/kustomization.yaml', prod.head.sha)).toBe(
      `images:\n  - name: ${image}\n    newTag: 1.2.0\n    digest: ${digest}\n`,
    );
    expect(prod.body).toContain('#### Signed');
    expect(prod.body).toContain(
      `  - provenance by [\`${RELEASE}\`](${RELEASE}) · issuer \`${ISSUER}\` · source [\`acme/hello\`](https://github.com/acme/hello) · commit [\`${COMMIT.slice(0, 12)}\`](https://github.com/acme/hello/commit/${COMMIT}) · workflow [\`.github/workflows/release.yml\`](https://github.com/acme/hello/.github/workflows/release.yml@refs/heads/main)`,
    );
    const passed = await checkOn(prod.head.sha, 'escalator/verify');
    expect(passed.conclusion).toBe('success');
    expect(passed.output.title).toBe('verify: 1 image satisfy the policy of prod');
  });

  it(
    'leaves the open prod pull request as it was when an unsigned version follows, and answers a command',
    { timeout: 150_000 },
    async () => {
      const before = await openPull('escalator/promote/prod/app', '1.2.0');
      const digest = await registry.push('team/app', '1.3.0', { seed: 4 });
      expect((await postImage(stack, `${image}:1.3.0@${digest}`)).status).toBe(202);
      const dev = await openPull('escalator/dev/app', '1.3.0');
      await stack.client.mergePull(`${owner}/${repo}`, dev.number);
      const main = (await stack.user.rest.repos.getBranch({ owner, repo, branch: 'main' })).data.commit.sha;
      const refused = await checkOn(main, 'escalator/verify escalator/promote/prod/app');
      expect(refused.conclusion).toBe('failure');
      expect(refused.output.summary).toContain(`\`${digest}\``);
      await stack.client.comment(`${owner}/${repo}`, before.number, '/escalator promote prod app');
      const reply = await eventually(
        async () =>
          (await stack.user.rest.issues.listComments({ owner, repo, issue_number: before.number })).data.find((c) =>
            c.body?.includes('Promotion into'),
          ),
        { what: 'the answer to /escalator promote', timeoutMs: 60_000 },
      );
      expect(reply.body).toContain(
        'Promotion into **prod**: no pull request, because the versions to promote do not satisfy its `verify` policy. The `escalator/verify escalator/promote/prod/app` check on the default branch says what was looked for, what was found and what to do.',
      );
      // The pull request of the verified 1.2.0 is untouched: same head, title and body.
      const after = (await stack.user.rest.pulls.get({ owner, repo, pull_number: before.number })).data;
      expect({ state: after.state, head: after.head.sha, title: after.title, body: after.body }).toEqual({
        state: 'open',
        head: before.head.sha,
        title: before.title,
        body: before.body,
      });
    },
  );

  describe('a bump into an environment that wants a cosign signature', () => {
    const key = generateKey();
    const keyed = 'gitops-keyed';

    beforeAll(async () => {
      const running = await registry.push('team/api', '1.0.0', { seed: 20 });
      await stack.client.createRepo({
        name: keyed,
        files: {
          '.github/escalator.yml': [
            'environments:',
            '  - name: dev',
            '    paths: ["apps/*/overlays/dev"]',
            '    from: registry',
            '    verify:',
            '      keys:',
            '        - |',
            ...key.publicPem
              .trim()
              .split('\n')
              .map((line) => `          ${line}`),
            'images:',
            `  - name: ${registry.host}/team/api`,
            '    pinDigest: true',
            '',
          ].join('\n'),
          'apps/api/overlays/dev/kustomization.yaml': `images:\n  - name: ${registry.host}/team/api\n    newTag: 1.0.0\n    digest: ${running}\n`,
        },
      });
      await waitIndexed(stack, owner, keyed);
    }, 60_000);

    it(
      'refuses a push signed by another key, and bumps one announced before it was signed once it is',
      { timeout: 150_000 },
      async () => {
        // Signed with a key the environment does not trust: refused at once, nothing written.
        const foreign = await registry.push('team/api', '1.1.0', { seed: 21 });
        await cosignSign(registry.host, 'team/api', foreign, generateKey().privateKey);
        expect((await postImage(stack, `${registry.host}/team/api:1.1.0@${foreign}`)).status).toBe(202);
        const main = (await stack.user.rest.repos.getBranch({ owner, repo: keyed, branch: 'main' })).data.commit.sha;
        const refused = await eventually(
          async () =>
            (
              await stack.user.rest.checks.listForRef({
                owner,
                repo: keyed,
                ref: main,
                check_name: 'escalator/verify escalator/dev/api',
              })
            ).data.check_runs[0],
          { what: 'the refusal on the default branch', timeoutMs: 60_000 },
        );
        expect(refused.conclusion).toBe('failure');
        expect(refused.output.summary).toContain('- a signature that none of the keys verifies');
        expect((await stack.user.rest.pulls.list({ owner, repo: keyed, state: 'open' })).data).toEqual([]);

        // Announced before CI signed it (the usual order): the bump waits for the signature.
        const signed = await registry.push('team/api', '1.2.0', { seed: 22 });
        expect((await postImage(stack, `${registry.host}/team/api:1.2.0@${signed}`)).status).toBe(202);
        await new Promise((resolve) => setTimeout(resolve, 2_000));
        expect((await stack.user.rest.pulls.list({ owner, repo: keyed, state: 'open' })).data).toEqual([]);
        await cosignSign(registry.host, 'team/api', signed, key.privateKey);
        const pull = await eventually(
          async () =>
            (await stack.user.rest.pulls.list({ owner, repo: keyed, state: 'open' })).data.find((p) =>
              p.title.includes('1.2.0'),
            ),
          { what: 'the bump of the signed image', timeoutMs: 60_000 },
        );
        expect(await readFile(stack, owner, keyed, 'apps/api/overlays/dev/kustomization.yaml', pull.head.sha)).toBe(
          `images:\n  - name: ${registry.host}/team/api\n    newTag: 1.2.0\n    digest: ${signed}\n`,
        );
        expect(pull.body).toContain(
          `#### Signed\n- \`${registry.host}/team/api\`@\`${signed}\`\n  - signed with cosign key 1 of 1`,
        );
        const passed = await eventually(
          async () =>
            (
              await stack.user.rest.checks.listForRef({
                owner,
                repo: keyed,
                ref: pull.head.sha,
                check_name: 'escalator/verify',
              })
            ).data.check_runs[0],
          { what: 'escalator/verify on the bump', timeoutMs: 60_000 },
        );
        expect(passed.conclusion).toBe('success');
      },
    );
  });
});
