import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRegistry, type LocalRegistry } from '../support/oci-images.js';
import { eventually, startStack, type Stack } from '../support/stack.js';

/**
 * Know what you promote, for real: Debian's `docker-registry` behind htpasswd basic auth, images
 * pushed by `skopeo` with labels and annotations (one multi-arch index), Escalator holding the
 * registry's credentials in a Docker config.json, and a source repository in the sandbox GitHub
 * whose commits, pull request and release carry markdown, HTML and mentions. The bump PR shows the
 * right digest, created time, platforms and source range, inert; a forged event is refused.
 */
const HOSTILE = [
  '<img src=x onerror=alert(1)> **Faster** [greeting](http://evil.example)',
  '@developer/release-managers please look, cc @octocat (fixes #1)',
  '</details> ``` closes https://github.com/developer/hello/issues/1',
];

function live(markdown: string): string[] {
  const outside = markdown
    .replace(/<!-- escalator:v1 .* -->/, '')
    .replace(/&#8288;/g, '\u2060')
    .replace(/^(`{3,})text\n[\s\S]*?\n\1$/gm, '')
    .replace(/(`+)[^`]*?\1/g, '')
    .replace(/\]\(https?:\/\/[^)\s]+\)/g, ']');
  return [
    ...outside.matchAll(
      /@[A-Za-z0-9]|#\d|<(?!\/?(details|summary|sub)>)[^ ]|(?<!redirect\\?\.)github\\?\.com\/[^ ]*\/(issues|pull)\/|\[[^\]]*\]\(http:\/\/evil/g,
    ),
  ].map((m) => m[0]);
}

describe('release notes and verified images in bump pull requests', () => {
  let stack: Stack;
  let registry: LocalRegistry;
  const work = mkdtempSync(join(tmpdir(), 'escalator-notes-'));
  let base = '';
  let head = '';
  let running = '';

  beforeAll(async () => {
    registry = await startRegistry({ username: 'escalator', password: 'pull-only-pass' });
    const authFile = join(work, 'config.json');
    writeFileSync(
      authFile,
      JSON.stringify({
        auths: {
          [registry.host]: {
            auth: Buffer.from('escalator:pull-only-pass').toString('base64'),
            owners: ['developer'],
          },
        },
      }),
    );
    stack = await startStack({ ESCALATOR_REGISTRY_AUTH_FILE: authFile });
    const web = new URL(stack.sim.apiUrl).host;
    const source = `http://${web}/developer/hello`;

    // The source repository: a release out of range, three hostile commits (one by a merged PR), a release in range.
    await stack.client.createRepo({ name: 'hello', files: { 'README.md': 'hello\n' } });
    const repo = { owner: 'developer', repo: 'hello' };
    base = (await stack.user.rest.repos.getBranch({ ...repo, branch: 'main' })).data.commit.sha;
    await stack.user.rest.repos.createRelease({ ...repo, tag_name: 'v1.0.0', body: 'the running version' });
    await stack.client.commit('developer/hello', { branch: 'main', files: { a: '1\n' }, message: HOSTILE[0] });
    await stack.client.commit('developer/hello', {
      branch: 'fix',
      files: { b: '2\n' },
      message: HOSTILE[1],
      from: 'main',
    });
    const pull = await stack.user.rest.pulls.create({ ...repo, title: HOSTILE[1]!, head: 'fix', base: 'main' });
    await stack.user.rest.pulls.merge({ ...repo, pull_number: pull.data.number, merge_method: 'squash' });
    head = (await stack.client.commit('developer/hello', { branch: 'main', files: { c: '3\n' }, message: HOSTILE[2] }))
      .sha;
    await stack.user.rest.repos.createRelease({
      ...repo,
      tag_name: 'v1.1.0',
      name: 'Hello 1.1.0 for @octocat',
      body: '## Changes\n- faster greeting, thanks @octocat #2\n</details>\n<script>alert(1)</script>',
    });

    running = await registry.push('team/app', '1.0.0', {
      labels: { 'org.opencontainers.image.source': source, 'org.opencontainers.image.revision': base },
      created: '2026-11-01T00:00:00Z',
      seed: 1,
    });
    await stack.client.createRepo({
      name: 'gitops',
      files: {
        '.github/escalator.yml':
          'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n',
        'apps/app/overlays/dev/kustomization.yaml': `images:\n- name: ${registry.host}/team/app\n  newTag: 1.0.0\n  digest: ${running}\n`,
      },
    });
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

  it('refuses a forged event whose digest the registry does not have, and says so', { timeout: 90_000 }, async () => {
    const forged = { repository: `${registry.host}/team/app`, tag: '1.0.0', digest: `sha256:${'f'.repeat(64)}` };
    const first = await post(forged);
    expect(first.status).toBe(202);
    // The answer's status URL says the same as a replay, to the same credential.
    const { images } = (await first.json()) as { images: Array<{ status: string }> };
    const status = await eventually(
      async () => {
        const res = await fetch(`${stack.app.url}${images[0]!.status}`, {
          headers: { authorization: `Bearer ${stack.ciToken}` },
        });
        const body = (await res.json()) as { outcome: string; detail: string };
        return body.outcome === 'pending' ? undefined : body;
      },
      { what: 'the status of the forged event' },
    );
    expect(status).toMatchObject({
      outcome: 'refused',
      detail:
        "it was refused: the registry did not confirm the announced image (the worker's log of that delivery says why)",
    });
    expect(JSON.stringify(status)).not.toContain(running);
    const answer = await eventually(
      async () => {
        const again = (await (await post(forged)).json()) as { duplicates?: Array<{ outcome: string }> };
        const outcome = again.duplicates?.[0]?.outcome;
        return outcome?.startsWith('it was refused') ? outcome : undefined;
      },
      { what: 'the forged event to be refused' },
    );
    // The reason (the digest the tag points at) is the worker's log's, never the sender's (issue 31).
    expect(answer).toBe(
      "it was refused: the registry did not confirm the announced image (the worker's log of that delivery says why)",
    );
    expect(answer).not.toContain(running);
    const open = await stack.user.rest.pulls.list({ owner: 'developer', repo: 'gitops', state: 'open' });
    expect(open.data).toEqual([]);
  });

  it('refuses an event whose tag has moved on to another digest', { timeout: 90_000 }, async () => {
    // An image a repository uses: the registry is asked only for those (an image no repository in
    // the sender's scope uses is never looked up).
    const other = await registry.push('team/app', '0.9.0', { seed: 9 });
    await registry.push('team/app', '0.9.0', { seed: 10 });
    const stale = { repository: `${registry.host}/team/app`, tag: '0.9.0', digest: other };
    expect((await post(stale)).status).toBe(202);
    const answer = await eventually(
      async () => {
        const again = (await (await post(stale)).json()) as { duplicates?: Array<{ outcome: string }> };
        const outcome = again.duplicates?.[0]?.outcome;
        return outcome?.startsWith('it was refused') ? outcome : undefined;
      },
      { what: 'the stale event to be refused' },
    );
    expect(answer).toBe(
      "it was refused: the registry did not confirm the announced image (the worker's log of that delivery says why)",
    );
  });

  it('shows digest, created time, platforms and the source range, inert', { timeout: 90_000 }, async () => {
    const digest = await registry.push('team/app', '1.1.0', {
      platforms: ['linux/amd64', 'linux/arm64'],
      labels: { 'org.opencontainers.image.source': 'https://github.com/elsewhere/ignored' },
      indexAnnotations: {
        'org.opencontainers.image.source': `http://${new URL(stack.sim.apiUrl).host}/developer/hello`,
        'org.opencontainers.image.revision': head,
        'org.opencontainers.image.created': '2026-12-01T08:30:00Z',
      },
      seed: 2,
    });
    expect((await post({ repository: `${registry.host}/team/app`, tag: '1.1.0', digest })).status).toBe(202);
    const pull = await eventually(
      async () =>
        (await stack.user.rest.pulls.list({ owner: 'developer', repo: 'gitops', state: 'open' })).data.find((p) =>
          p.body?.includes('What changed'),
        ),
      { what: 'the bump PR with its notes', timeoutMs: 60_000 },
    );
    const body = pull.body ?? '';
    expect(pull.title).toBe('Bump app to 1.1.0 in dev');
    expect(body).toContain(`| Digest | \`${digest}\` |`);
    expect(body).toContain('| Created | 2026-12-01 08:30 UTC |');
    expect(body).toContain('| Platforms | `linux/amd64`, `linux/arm64` |');
    expect(body).toContain(`| Revisions | \`${base.slice(0, 7)}\` → \`${head.slice(0, 7)}\` |`);
    expect(body).toContain('#### `' + registry.host + '/team/app` `1.0.0` → `1.1.0`');
    expect(body).toContain('**Commits (3)**');
    expect(body).toContain('**Merged pull requests (1)**');
    expect(body).toContain('<details><summary>v1\\.1\\.0: Hello 1\\.1\\.0 for \\@&#8288;octocat</summary>');
    expect(body).not.toContain('the running version');
    expect(body).toContain(`/developer/hello/compare/${base}...${head})`);
    expect(live(body)).toEqual([]);
  });

  it('shows a promotion over three versions as one range, each release once', { timeout: 120_000 }, async () => {
    const repo = { owner: 'developer', repo: 'hello' };
    const newest = (
      await stack.client.commit('developer/hello', { branch: 'main', files: { d: '4\n' }, message: 'Even faster' })
    ).sha;
    await stack.user.rest.repos.createRelease({ ...repo, tag_name: 'v1.2.0', body: '- even faster' });
    const source = `http://${new URL(stack.sim.apiUrl).host}/developer/hello`;
    await registry.push('team/app', '1.2.0', {
      labels: { 'org.opencontainers.image.source': source, 'org.opencontainers.image.revision': newest },
      seed: 3,
    });
    const overlay = (tag: string) => `images:\n- name: ${registry.host}/team/app\n  newTag: ${tag}\n`;
    await stack.client.createRepo({
      name: 'promo',
      files: {
        '.github/escalator.yml':
          'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n  - name: prod\n    paths: ["apps/*/overlays/prod"]\n    from: dev\n',
        'apps/app/overlays/dev/kustomization.yaml': overlay('1.0.0'),
        'apps/app/overlays/prod/kustomization.yaml': overlay('1.0.0'),
      },
    });
    // dev went through 1.1.0 to 1.2.0 while prod stayed at 1.0.0.
    await stack.client.commit('developer/promo', {
      branch: 'main',
      files: { 'apps/app/overlays/dev/kustomization.yaml': overlay('1.1.0') },
    });
    await stack.client.commit('developer/promo', {
      branch: 'main',
      files: { 'apps/app/overlays/dev/kustomization.yaml': overlay('1.2.0') },
    });
    const pull = await eventually(
      async () =>
        (await stack.user.rest.pulls.list({ owner: 'developer', repo: 'promo', state: 'open' })).data.find(
          (p) => p.title === 'Promote app 1.2.0 to prod' && p.body?.includes('What changed'),
        ),
      { what: 'the promotion PR with its notes', timeoutMs: 90_000 },
    );
    const body = pull.body ?? '';
    expect(body).toContain('#### `' + registry.host + '/team/app` `1.0.0` → `1.2.0`');
    expect(body).toContain(`| Revisions | \`${base.slice(0, 7)}\` → \`${newest.slice(0, 7)}\` |`);
    expect(body).toContain('**Commits (4)**');
    expect(body).toContain('**Releases** (2)');
    expect(body.match(/<summary>v1\\.1\\.0/g)).toHaveLength(1);
    expect(body.match(/<summary>v1\\.2\\.0/g)).toHaveLength(1);
    expect(body).not.toContain('the running version');
    expect(live(body)).toEqual([]);
  });
});
