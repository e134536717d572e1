import { createHash, randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRegistry, type LocalRegistry } from '../support/oci-images.js';
import { eventually, startStack, waitIndexed, type Stack } from '../support/stack.js';

/**
 * Issue 31, item 3: registry credentials belong to owners. A real registry (Debian's
 * `docker-registry` behind htpasswd) holds a private image of `example`; the operator's
 * `ESCALATOR_REGISTRY_AUTH_FILE` gives its credential to `example` only. A second installation
 * (`acme`) runs the same image name in its own GitOps repository, and its CI (a token scoped to
 * `acme`) announces it. Nothing acme gets back — its pull request, the HTTP answer, the outcome
 * replayed when it sends the event again — holds a fact of the private image it did not send:
 * no digest, created time, platforms, source, nor whether a tag exists.
 */
const sha256 = (token: string): string => createHash('sha256').update(token).digest('hex');
const FORGED = `sha256:${'f'.repeat(64)}`;
const SECRET_SOURCE = 'https://github.com/example/secret-app';
const SECRET_REVISION = 'c0ffee'.repeat(6) + 'c0ff';

describe('registry credentials serve their owners only (real registry, two installations)', () => {
  let stack: Stack;
  let registry: LocalRegistry;
  const work = mkdtempSync(join(tmpdir(), 'escalator-owners-'));
  const acmeToken = `acme-${randomUUID()}`;
  const exampleToken = `example-${randomUUID()}`;
  let privateDigest = '';
  let unusedDigest = '';
  let image = '';
  const secrets = (): string[] => [
    privateDigest,
    privateDigest.slice('sha256:'.length, 'sha256:'.length + 12),
    unusedDigest,
    '2026-10-10',
    'linux/arm64',
    'secret-app',
    SECRET_REVISION.slice(0, 7),
  ];

  beforeAll(async () => {
    registry = await startRegistry({ username: 'example-bot', password: 'example-pull-pass' });
    image = `${registry.host}/example/private`;
    await registry.push('example/private', '1.0.0', { seed: 4 });
    privateDigest = await registry.push('example/private', '2.0.0', {
      platforms: ['linux/amd64', 'linux/arm64'],
      created: '2026-10-10T10:10:10Z',
      labels: {
        'org.opencontainers.image.source': SECRET_SOURCE,
        'org.opencontainers.image.revision': SECRET_REVISION,
      },
      seed: 5,
    });
    unusedDigest = await registry.push('example/unused', '1.0.0', { seed: 6 });
    const authFile = join(work, 'config.json');
    writeFileSync(
      authFile,
      JSON.stringify({
        auths: {
          [registry.host]: {
            auth: Buffer.from('example-bot:example-pull-pass').toString('base64'),
            owners: ['example'],
          },
        },
      }),
    );
    stack = await startStack(
      {
        ESCALATOR_REGISTRY_AUTH_FILE: authFile,
        ESCALATOR_REGISTRY_TOKEN: undefined,
        ESCALATOR_CI_TOKEN: undefined,
        ESCALATOR_INTAKE_TOKENS: JSON.stringify([
          { name: 'acme-ci', sha256: sha256(acmeToken), owners: ['acme'], sources: ['ci'] },
          { name: 'example-ci', sha256: sha256(exampleToken), owners: ['example'], sources: ['ci'] },
        ]),
      },
      { name: 'owners' },
    );
    const config = 'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n';
    const overlay = `images:\n- name: ${image}\n  newTag: 1.0.0\n`;
    for (const owner of ['acme', 'example'])
      await stack.client.createRepo({
        owner,
        name: 'gitops',
        files: { '.github/escalator.yml': config, 'apps/app/overlays/dev/kustomization.yaml': overlay },
      });
    await waitIndexed(stack, 'acme', 'gitops');
    await waitIndexed(stack, 'example', 'gitops');
  }, 90_000);

  afterAll(async () => {
    await stack?.close();
    registry?.close();
    rmSync(work, { recursive: true, force: true });
  });

  const post = (token: string, body: Record<string, unknown>) =>
    fetch(`${stack.app.url}/api/v1/images`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify(body),
    });
  /** Sends the event until the answer replays the first delivery's finished outcome; returns every answer's text. */
  const replayed = async (
    token: string,
    body: Record<string, unknown>,
  ): Promise<{ texts: string[]; outcome: string }> => {
    const texts: string[] = [];
    const first = await post(token, body);
    expect(first.status).toBe(202);
    texts.push(await first.text());
    const outcome = await eventually(
      async () => {
        const text = await (await post(token, body)).text();
        texts.push(text);
        const outcome = (JSON.parse(text) as { duplicates?: Array<{ outcome: string }> }).duplicates?.[0]?.outcome;
        // `it was processed`: the job completed between the two reads of the answer (its result not read yet).
        return outcome && !/not processed yet|being processed now|^it was processed$/.test(outcome)
          ? outcome
          : undefined;
      },
      { what: 'the first delivery to finish' },
    );
    return { texts, outcome };
  };
  const pullOf = (owner: string, tag: string) =>
    eventually(
      async () =>
        (await stack.user.rest.pulls.list({ owner, repo: 'gitops', state: 'open' })).data.find(
          (p) => p.title.includes(tag) && p.body?.includes('What changed'),
        ),
      { what: `${owner}'s bump PR to ${tag}`, timeoutMs: 60_000 },
    );

  it(
    "shows acme, announcing example's private image without a digest, none of its facts",
    { timeout: 90_000 },
    async () => {
      // Without a digest every delivery is an event of its own (src/events/image-published.ts, eventKey).
      const answer = await post(acmeToken, { repository: image, tag: '2.0.0' });
      expect(answer.status).toBe(202);
      const texts = [await answer.text()];
      const pull = await pullOf('acme', '2.0.0');
      const body = pull.body ?? '';
      for (const secret of secrets()) {
        expect(body, secret).not.toContain(secret);
        for (const text of texts) expect(text, secret).not.toContain(secret);
      }
      // The registry was asked anonymously, and said no: the pull request says so.
      expect(body).toContain('refused to serve the manifest example/private:2\\.0\\.0 \\(401\\)');
    },
  );

  it(
    'never tells acme, in a replayed outcome, a digest or whether a tag exists — even for images no repository of acme uses',
    { timeout: 120_000 },
    async () => {
      const answers = [
        await replayed(acmeToken, { repository: `${registry.host}/example/unused`, tag: '1.0.0', digest: FORGED }),
        await replayed(acmeToken, { repository: `${registry.host}/example/unused`, tag: '7.7.7', digest: FORGED }),
        await replayed(acmeToken, { repository: image, tag: '2.0.0', digest: FORGED }),
        await replayed(acmeToken, { repository: image, tag: '9.9.9', digest: FORGED }),
      ];
      for (const { texts, outcome } of answers)
        for (const secret of secrets()) {
          expect(outcome, secret).not.toContain(secret);
          for (const text of texts) expect(text, secret).not.toContain(secret);
        }
      // A tag that exists and one that does not get the same answer.
      expect(answers[0]!.outcome).toBe(answers[1]!.outcome);
      expect(answers[2]!.outcome).toBe(answers[3]!.outcome);
      expect(answers[0]!.outcome).not.toMatch(/refused/);
    },
  );

  it(
    "still verifies the owner's own events, with its credential, and shows it the facts",
    { timeout: 120_000 },
    async () => {
      const forged = await replayed(exampleToken, { repository: image, tag: '2.0.0', digest: FORGED });
      expect(forged.outcome).toBe(
        "it was refused: the registry did not confirm the announced image (the worker's log of that delivery says why)",
      );
      for (const text of forged.texts) expect(text).not.toContain(privateDigest);
      expect((await post(exampleToken, { repository: image, tag: '2.0.0', digest: privateDigest })).status).toBe(202);
      const body = (await pullOf('example', '2.0.0')).body ?? '';
      expect(body).toContain(`| Digest | \`${privateDigest}\` |`);
      expect(body).toContain('| Platforms | `linux/amd64`, `linux/arm64` |');
    },
  );
});
