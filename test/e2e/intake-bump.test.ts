import { createHmac, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually, postImage, readFile, startStack, type Stack } from '../support/stack.js';

const fixture = (path: string): string => readFileSync(`test/fixtures/registry/${path}`, 'utf8');
const config = `environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\nimages:\n  - name: ghcr.io/example/burst\n    policy: semver\n`;

/** Every provider's documented payload, the image it announces, and how it authenticates. */
const providers = [
  {
    source: 'distribution',
    file: 'distribution/debian-2.8-03-push-single.json',
    image: '127.0.0.1:35471/team/app',
    tag: '1.2.3',
    type: 'application/vnd.docker.distribution.events.v1+json',
  },
  {
    source: 'harbor',
    file: 'harbor/push-artifact-default.json',
    image: 'hub.harbor.com/test-webhook/debian',
    tag: 'latest',
  },
  { source: 'acr', file: 'acr/push.json', image: 'myregistry.azurecr.io/hello-world', tag: 'v1' },
  {
    source: 'ecr',
    file: 'ecr/image-push-full-digest.json',
    image: '123456789012.dkr.ecr.us-west-2.amazonaws.com/my-repository-name',
    tag: 'latest',
  },
  {
    source: 'dockerhub',
    file: 'dockerhub/webhook-example.json',
    image: 'svendowideit/testhook',
    tag: 'latest',
    pathToken: true,
  },
  { source: 'quay', file: 'quay/repository-push.json', image: 'quay.io/dgangaia/test', tag: 'latest', pathToken: true },
];

describe('registry events → bump PRs (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  const owner = 'developer';

  beforeAll(async () => {
    stack = await startStack();
    const images = [...providers.map((p) => p.image), 'ghcr.io/theryangeary/www'];
    await stack.client.createRepo({
      name: 'providers',
      files: {
        '.github/escalator.yml': config,
        'apps/all/overlays/dev/kustomization.yaml': `images:\n${images.map((image) => `  - name: ${image}\n    newTag: old\n`).join('')}`,
      },
    });
    await stack.client.createRepo({
      name: 'burst',
      files: {
        '.github/escalator.yml': config,
        'apps/burst/overlays/dev/kustomization.yaml': 'images:\n  - name: ghcr.io/example/burst\n    newTag: 1.0.0\n',
        'apps/ten/overlays/dev/kustomization.yaml': `images:\n${Array.from({ length: 10 }, (_, i) => `  - name: ghcr.io/example/svc${i}\n    newTag: 1.0.0\n`).join('')}`,
      },
    });
  });
  afterAll(async () => {
    await stack?.close();
  });

  const send = (p: (typeof providers)[number]) =>
    fetch(`${stack.app.url}/registry/${p.source}${p.pathToken ? `/${stack.registryToken}` : ''}`, {
      method: 'POST',
      headers: {
        'content-type': p.type ?? 'application/json',
        ...(p.pathToken ? {} : { authorization: `Bearer ${stack.registryToken}` }),
      },
      body: fixture(p.file),
    });

  it("takes each provider's payload through its route into the same PR, once", { timeout: 90_000 }, async () => {
    for (const provider of providers) expect((await send(provider)).status).toBe(202);
    // GitHub Container Registry arrives as a signed registry_package delivery.
    const body = fixture('github/package-published-multiarch.json').replace('"package":', '"registry_package":');
    const signature = `sha256=${createHmac('sha256', stack.sim.app.webhookSecret).update(body).digest('hex')}`;
    const github = await fetch(`${stack.app.url}/api/github/webhooks`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        'x-github-event': 'registry_package',
        'x-github-delivery': randomUUID(),
        'x-hub-signature-256': signature,
      },
      body,
    });
    expect(github.status).toBe(202);

    const path = 'apps/all/overlays/dev/kustomization.yaml';
    const expected = (await readFile(stack, owner, 'providers', path, 'main'))
      .split('\n')
      .map((line, i, lines) => (line === '    newTag: old' ? `    newTag: ${tagFor(lines[i - 1] as string)}` : line))
      .join('\n');
    const pull = await eventually(
      async () => {
        const open = (await stack.user.rest.pulls.list({ owner, repo: 'providers', state: 'open' })).data;
        if (open.length !== 1) return undefined;
        const text = await readFile(stack, owner, 'providers', path, open[0]!.head.sha);
        return text === expected ? open[0] : undefined;
      },
      { what: 'one PR with every provider image', timeoutMs: 60_000 },
    );
    expect(pull.head.ref).toBe('escalator/dev/all');

    // The same deliveries again: no new commit.
    const before = (await stack.user.rest.pulls.listCommits({ owner, repo: 'providers', pull_number: pull.number }))
      .data.length;
    // The same deliveries again: each is answered "duplicate" with what its first delivery led to.
    for (const provider of providers.filter((p) => !p.pathToken)) {
      const again = await send(provider);
      const answer = (await again.json()) as {
        accepted: number;
        duplicate: number;
        duplicates: Array<{ image: string; firstSeenAt: string; state: string; outcome: string }>;
      };
      expect(again.status).toBe(200);
      expect(answer.accepted).toBe(0);
      expect(answer.duplicate).toBe(answer.duplicates.length);
      for (const duplicate of answer.duplicates) {
        expect(duplicate.image.startsWith(`${provider.image}:${provider.tag}`)).toBe(true);
        expect(duplicate.state).toBe('completed');
        expect(duplicate.outcome).toBe('it scheduled 1 bump');
        expect(Date.parse(duplicate.firstSeenAt)).toBeLessThan(Date.now());
      }
    }
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(
      (await stack.user.rest.pulls.listCommits({ owner, repo: 'providers', pull_number: pull.number })).data.length,
    ).toBe(before);
  });

  it(
    'turns 100 pushes of one image within 10 s into one PR at the newest tag, in at most 3 commits',
    { timeout: 90_000 },
    async () => {
      // One push every 80 ms on a fixed schedule, like a busy CI: all 100 are sent within 8 s.
      const started = Date.now();
      const sent: Array<Promise<Response>> = [];
      for (let i = 1; i <= 100; i++) {
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + (i - 1) * 80 - Date.now())));
        sent.push(postImage(stack, `ghcr.io/example/burst:1.0.${i}`));
      }
      expect(Date.now() - started).toBeLessThan(10_000);
      expect((await Promise.all(sent)).map((r) => r.status)).toEqual(Array(100).fill(202));
      const pull = await eventually(
        async () => {
          const open = (
            await stack.user.rest.pulls.list({
              owner,
              repo: 'burst',
              state: 'open',
              head: `${owner}:escalator/dev/burst`,
            })
          ).data;
          return open[0]?.title === 'Bump burst to 1.0.100 in dev' ? open[0] : undefined;
        },
        { what: 'the PR at 1.0.100', timeoutMs: 60_000 },
      );
      const commits = (await stack.user.rest.pulls.listCommits({ owner, repo: 'burst', pull_number: pull.number }))
        .data;
      expect(commits.length).toBeLessThanOrEqual(3);
      expect(await readFile(stack, owner, 'burst', 'apps/burst/overlays/dev/kustomization.yaml', pull.head.sha)).toBe(
        'images:\n  - name: ghcr.io/example/burst\n    newTag: 1.0.100\n',
      );
    },
  );

  it('lands ten different images pushed at once into one file, losing none', { timeout: 90_000 }, async () => {
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) => postImage(stack, `ghcr.io/example/svc${i}:2.0.${i}`)),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(202));
    const expected = `images:\n${Array.from({ length: 10 }, (_, i) => `  - name: ghcr.io/example/svc${i}\n    newTag: 2.0.${i}\n`).join('')}`;
    await eventually(
      async () => {
        const open = (
          await stack.user.rest.pulls.list({ owner, repo: 'burst', state: 'open', head: `${owner}:escalator/dev/ten` })
        ).data;
        if (!open[0]) return undefined;
        return (await readFile(stack, owner, 'burst', 'apps/ten/overlays/dev/kustomization.yaml', open[0].head.sha)) ===
          expected
          ? true
          : undefined;
      },
      { what: 'all ten images in the PR', timeoutMs: 60_000 },
    );
  });

  it('waits out a secondary rate limit and then completes the bump', { timeout: 90_000 }, async () => {
    await stack.client.setRateLimit({ mode: 'secondary', count: 3, retryAfter: 2 });
    const limitedAt = Date.now();
    expect((await postImage(stack, 'ghcr.io/example/svc0:3.0.0')).status).toBe(202);
    // Ask GitHub nothing ourselves until Escalator has met the limit: the switch counts every request.
    await eventually(
      async () =>
        stack.calls.some((call) => call.at >= limitedAt && (call.status === 403 || call.status === 429))
          ? true
          : undefined,
      { what: 'Escalator to meet the rate limit' },
    );
    await eventually(
      async () => {
        const open = (
          await stack.user.rest.pulls.list({ owner, repo: 'burst', state: 'open', head: `${owner}:escalator/dev/ten` })
        ).data;
        if (!open[0]) return undefined;
        return (
          await readFile(stack, owner, 'burst', 'apps/ten/overlays/dev/kustomization.yaml', open[0].head.sha)
        ).includes('newTag: 3.0.0')
          ? true
          : undefined;
      },
      { what: 'the bump after the rate limit', timeoutMs: 60_000 },
    );
    const limited = stack.calls.filter((call) => call.at >= limitedAt && (call.status === 403 || call.status === 429));
    expect(limited.length).toBeGreaterThan(0);
  });
});

function tagFor(nameLine: string): string {
  const name = nameLine.replace('  - name: ', '');
  if (name === 'ghcr.io/theryangeary/www') return '0e2a89b';
  return providers.find((p) => p.image === name)?.tag ?? 'missing';
}
