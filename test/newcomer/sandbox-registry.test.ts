/**
 * "What changed", complete, and nothing leaves the machine: a new user runs `npm run sandbox`
 * and its first printed step, and the bump pull request shows the digest the sandbox's local
 * registry serves, the platforms, and from the image's source repository in the simulated GitHub
 * the commits, the merged pull request and the release notes (and the CI token sent to the
 * registry route by mistake is answered with the token that was expected; a promotion's body and
 * its diff comment name the same checks as not required). Every Node process of the run
 * (npm's script, the sandbox, Escalator) writes each connection it starts and each name it looks
 * up (test/newcomer/egress-log.mjs, through NODE_OPTIONS): none goes beyond loopback.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import type { SandboxReady } from '@escalator/github-sandbox/launch';
import { afterAll, describe, expect, it } from 'vitest';
import { testDelays } from '../support/delays.js';
import { freePort } from '../support/net.js';

const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'escalator-egress-'));
const egressLog = join(work, 'egress.jsonl');
let npm: ChildProcess | undefined;

afterAll(() => {
  try {
    if (npm?.pid) process.kill(-npm.pid, 'SIGKILL');
  } catch {
    // the group is gone already
  }
  rmSync(work, { recursive: true, force: true });
});

/** `npm run sandbox`, as in a terminal (its own process group); resolves once "Press Ctrl-C" is printed. */
function startSandbox(appPort: number): Promise<{ ready: SandboxReady; stdout: string; exited: Promise<unknown> }> {
  npm = spawn('npm', ['run', '--silent', 'sandbox', '--', '--app-port', String(appPort)], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    env: {
      ...process.env,
      // The product's waits as the tests set them (the sandbox passes them on to Escalator).
      ...testDelays,
      LOG_LEVEL: 'warn',
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import ${join(import.meta.dirname, 'egress-log.mjs')}`.trim(),
      ESCALATOR_TEST_EGRESS_LOG: egressLog,
      // npm's own check for a newer npm is npm's, not the sandbox's: off, as in CI.
      npm_config_update_notifier: 'false',
    },
  });
  let stderr = '';
  npm.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise((resolve) => npm!.once('exit', resolve));
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    let ready: SandboxReady | undefined;
    createInterface({ input: npm!.stdout! }).on('line', (line) => {
      lines.push(line);
      if (line.startsWith('SANDBOX_READY ')) ready = JSON.parse(line.slice('SANDBOX_READY '.length)) as SandboxReady;
      if (ready && line.includes('Press Ctrl-C')) resolve({ ready, stdout: lines.join('\n'), exited });
    });
    void exited.then((code) => reject(new Error(`sandbox exited with ${String(code)}:\n${stderr}`)));
  });
}

/** The command of printed step `n`, as printed (continued lines joined by the shell). */
function printedCommand(stdout: string, n: number): string {
  const [, block = ''] = new RegExp(`\\n {2}${n}\\. [^\\n]*\\n((?: {5}[^\\n]*\\n)+)`).exec(stdout) ?? [];
  return block
    .split('\n')
    .filter((line) => line.trim() !== '' && (line.trimStart().startsWith('curl') || /^ {7}/.test(line)))
    .map((line) => line.trim())
    .join('\n');
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || /^127\.\d+\.\d+\.\d+$/.test(host) || host === '::1' || host === '::ffff:127.0.0.1';
}

describe('the sandbox serves its images from a local registry', () => {
  it('shows digest, platforms, commits, merged pull requests and release notes, and calls nothing outside', async () => {
    const { ready, stdout, exited } = await startSandbox(await freePort());
    const images = ready.registry.images;
    expect(ready.registry.stands_for).toBe('ghcr.io');
    expect(new URL(ready.registry.url).hostname).toBe('127.0.0.1');
    const served = images['ghcr.io/example/hello:1.1.0'];
    expect(served).toMatch(/^sha256:[0-9a-f]{64}$/);

    // The registry answers as the OCI Distribution API does (end-1, end-8a, end-3).
    expect((await fetch(`${ready.registry.url}/v2/`)).status).toBe(200);
    const tags = (await (await fetch(`${ready.registry.url}/v2/example/hello/tags/list`)).json()) as { tags: string[] };
    expect(tags.tags).toEqual(['0.9.2', '1.0.0', '1.1.0', '1.2.0']);
    const head = await fetch(`${ready.registry.url}/v2/example/hello/manifests/1.1.0?ns=ghcr.io`, {
      method: 'HEAD',
      headers: { accept: 'application/vnd.oci.image.index.v1+json' },
    });
    expect(head.headers.get('docker-content-digest')).toBe(served);
    expect(head.headers.get('content-type')).toBe('application/vnd.oci.image.index.v1+json');
    expect((await fetch(`${ready.registry.url}/v2/example/hello/manifests/1.1.0?ns=docker.io`)).status).toBe(404);

    // The seeded repository pins what the registry serves for each tag (the sandbox builds its images at start).
    const auth = { authorization: `token ${ready.user.token}`, accept: 'application/vnd.github.raw+json' };
    const staging = await (
      await fetch(
        `${ready.api_url}/repos/${ready.repository}/contents/apps/hello/overlays/staging/kustomization.yaml`,
        {
          headers: auth,
        },
      )
    ).text();
    expect(staging).toContain(
      `{name: ghcr.io/example/hello, newTag: 1.0.0, digest: ${images['ghcr.io/example/hello:1.0.0']}}`,
    );

    // Step 1, as printed: the announced digest is the one the registry serves.
    const step1 = printedCommand(stdout, 1);
    expect(step1).toContain(served);
    // A newcomer's usual mistake first: the printed CI token on the registry route. The 401 says
    // which token was expected, and holds no token value.
    const mistaken = await run('sh', [
      '-c',
      `${step1.replace(ready.registry_token, ready.ci_token)} -w '\\n%{http_code}'`,
    ]);
    expect(mistaken.stdout.trim().split('\n').at(-1)).toBe('401');
    expect(mistaken.stdout).toContain('expected ESCALATOR_REGISTRY_TOKEN');
    for (const token of [ready.ci_token, ready.registry_token, ready.admin_token])
      expect(mistaken.stdout).not.toContain(token);
    const { stdout: answer } = await run('sh', ['-c', step1]);
    expect(JSON.parse(answer)).toMatchObject({ accepted: 1 });

    let body = '';
    for (let i = 0; i < 240 && !body.includes('**Commits'); i++) {
      const pulls = (await (
        await fetch(`${ready.api_url}/repos/${ready.repository}/pulls?state=all`, { headers: auth })
      ).json()) as Array<{ title: string; body: string | null }>;
      body = pulls.find((pull) => pull.title === 'Bump hello to 1.1.0 in dev')?.body ?? '';
      if (!body.includes('**Commits')) await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(body).not.toContain('could not read');
    expect(body).toContain(`| Digest | \`${served}\` |`);
    expect(body).toContain('| Created | 2026-11-24 14:30 UTC |');
    expect(body).toContain('| Platforms | `linux/amd64`, `linux/arm64` |');
    expect(body).toContain(`| Source | [example/hello](https://${new URL(ready.github_url).host}/example/hello) |`);
    expect(body).toContain('**Commits (3)**');
    expect(body).toContain('Cache the greeting between requests');
    expect(body).toContain("Log each request's id");
    expect(body).toContain('**Merged pull requests (1)**');
    expect(body).toContain('<details><summary>v1\\.1\\.0: hello 1\\.1\\.0</summary>');
    expect(body).toContain('- The greeting is cached between requests.');
    // The release of the running version is not in the range.
    expect(body).not.toContain('v1\\.0\\.0: hello');

    // The promotion's body and its diff comment name the same checks as not required (with the
    // agent's health gate among them: every environment of the sandbox reports health).
    const warning = (text: string) =>
      /^> (`escalator\/.*) (?:is not a required check|are not required checks) on/m.exec(text)?.[1];
    let bodyWarning: string | undefined;
    let commentWarning: string | undefined;
    for (let i = 0; i < 240 && (bodyWarning === undefined || commentWarning === undefined); i++) {
      const pulls = (await (
        await fetch(`${ready.api_url}/repos/${ready.repository}/pulls?state=all`, { headers: auth })
      ).json()) as Array<{ number: number; title: string; body: string | null }>;
      const promotion = pulls.find((pull) => pull.title === 'Promote world 2.3.0 to staging');
      if (promotion) {
        bodyWarning = warning(promotion.body ?? '');
        const comments = (await (
          await fetch(`${ready.api_url}/repos/${ready.repository}/issues/${promotion.number}/comments`, {
            headers: auth,
          })
        ).json()) as Array<{ body: string }>;
        commentWarning = comments.map((comment) => warning(comment.body)).find(Boolean);
      }
      if (bodyWarning === undefined || commentWarning === undefined)
        await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(bodyWarning).toBe('`escalator/health`, `escalator/soak` and `escalator/hold`');
    expect(commentWarning).toBe(bodyWarning);

    process.kill(-npm!.pid!, 'SIGINT');
    await exited;

    const entries = readFileSync(egressLog, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { pid: number; kind: 'connect' | 'lookup'; host: string; port?: number });
    // The log saw the run's own calls (so it would have seen others): Escalator read the registry.
    const registryPort = Number(new URL(ready.registry.url).port);
    expect(entries.some((entry) => entry.kind === 'connect' && entry.port === registryPort)).toBe(true);
    expect(entries.filter((entry) => !isLoopback(entry.host))).toEqual([]);
  }, 300_000);
});
