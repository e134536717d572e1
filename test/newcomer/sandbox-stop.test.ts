/**
 * Every way a new user (or their process manager, IDE stop button or `kill $!`) stops the
 * sandbox stops all of it: `npm run sandbox` is started as a real process, one of its processes
 * gets a signal, and then Escalator, the sandbox and the simulated agent are gone, their ports can
 * be bound again (the next start does not meet "port in use") and the run's Redis keys are gone.
 * Ctrl-C in a terminal (SIGINT to the whole process group) is test/newcomer/sandbox.test.ts.
 * The sandboxes start side by side, so the file costs about one start; one of them seeds a
 * repository with `dashboard: true`, whose printed steps must name the pull requests after the
 * dashboard issue.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { appendFileSync, cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { createServer } from 'node:net';
import { createInterface } from 'node:readline';
import type { SandboxReady } from '@escalator/github-sandbox/launch';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { testDelays } from '../support/delays.js';
import { freePort } from '../support/net.js';

const run = promisify(execFile);
const root = join(import.meta.dirname, '../..');
const started: ChildProcess[] = [];
const pids: number[] = [];
afterAll(() => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  }
});

interface Running {
  npm: ChildProcess;
  stdout: string;
  ready: SandboxReady;
  controlUrl: string;
  stderr: () => string;
}

/** `npm run sandbox` as a script starts it: not in a terminal, its own process group. */
function startSandbox(appPort: number, more: string[] = []): Promise<Running> {
  const npm = spawn('npm', ['run', '--silent', 'sandbox', '--', '--app-port', String(appPort), ...more], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    // The product's waits as the tests set them (the sandbox passes them on to Escalator).
    env: { ...process.env, ...testDelays, LOG_LEVEL: 'warn' },
  });
  started.push(npm);
  let stderr = '';
  npm.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    let ready: SandboxReady | undefined;
    let controlUrl = '';
    const lines: string[] = [];
    createInterface({ input: npm.stdout! }).on('line', (line) => {
      lines.push(line);
      if (line.startsWith('SANDBOX_READY ')) {
        ready = JSON.parse(line.slice('SANDBOX_READY '.length)) as SandboxReady;
        pids.push(ready.pids.sandbox, ready.pids.escalator);
      }
      if (line.startsWith('AGENT_READY '))
        controlUrl = (JSON.parse(line.slice('AGENT_READY '.length)) as { control_url: string }).control_url;
      if (ready && line.includes('Press Ctrl-C'))
        resolve({ npm, stdout: lines.join('\n'), ready, controlUrl, stderr: () => stderr });
    });
    npm.once('exit', (code) => reject(new Error(`the sandbox exited with ${code} before it was ready:\n${stderr}`)));
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

/** Waits (on the processes, not a clock) until the sandbox and Escalator are gone, then checks what they held. */
async function expectAllStopped(sandbox: Running): Promise<void> {
  const { ready } = sandbox;
  for (let i = 0; i < 240 && (alive(ready.pids.sandbox) || alive(ready.pids.escalator)); i++)
    await new Promise((resolve) => setTimeout(resolve, 250));
  expect(alive(ready.pids.escalator)).toBe(false);
  expect(alive(ready.pids.sandbox)).toBe(false);
  expect(sandbox.stderr()).toContain(`Removed this run's`);
  for (const url of [ready.app_url, ready.api_url, sandbox.controlUrl, ready.relay_url])
    expect(await portFree(Number(new URL(url).port)), url).toBe(true);
  const redis = new Redis(ready.redis_url);
  try {
    expect(await redis.keys(`${ready.redis_prefix}:*`)).toEqual([]);
  } finally {
    redis.disconnect();
  }
}

describe('stopping the sandbox from a script', () => {
  it('stops everything and removes its keys on SIGTERM or SIGINT to npm, to Escalator, or when npm dies', async () => {
    const ways: Array<{ name: string; signal: (sandbox: Running) => void }> = [
      { name: 'SIGTERM to npm', signal: (s) => s.npm.kill('SIGTERM') },
      { name: 'SIGINT to npm', signal: (s) => s.npm.kill('SIGINT') },
      { name: 'npm killed (the parent dies)', signal: (s) => s.npm.kill('SIGKILL') },
      { name: 'SIGTERM to Escalator', signal: (s) => process.kill(s.ready.pids.escalator, 'SIGTERM') },
      // Last: this one also walks the first steps of a repository with a dashboard issue.
      { name: 'SIGINT to the sandbox process', signal: (s) => process.kill(s.ready.pids.sandbox, 'SIGINT') },
    ];
    // One of them seeds a repository with `dashboard: true`: its printed steps name the pull
    // requests after the dashboard issue, and step 1 run as printed opens them there.
    const repo = mkdtempSync(join(tmpdir(), 'dashboard-gitops-'));
    cpSync(join(root, 'examples/gitops-repo'), repo, { recursive: true });
    appendFileSync(join(repo, '.github/escalator.yml'), 'dashboard: true\n');
    const ports = await Promise.all(ways.map(() => freePort()));
    const sandboxes = await Promise.all(
      ports.map((port, index) => startSandbox(port, index === ways.length - 1 ? ['--repo', repo] : [])),
    );
    // The agent's controls are printed before "Press Ctrl-C", the last line a person reads.
    for (const sandbox of sandboxes) expect(sandbox.controlUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
    const redis = new Redis(sandboxes[0]!.ready.redis_url);
    try {
      for (const sandbox of sandboxes)
        expect((await redis.keys(`${sandbox.ready.redis_prefix}:*`)).length).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
    ways.slice(0, -1).forEach((way, index) => way.signal(sandboxes[index]!));
    try {
      const dashboard = sandboxes.at(-1)!;
      // Found by its title: the promotions the first index opens may take the first numbers.
      const printed =
        /Issue (\d+) is the dashboard \(dashboard: true\): http:\/\/127\.0\.0\.1:\d+\/example\/gitops\/issues\/(\d+)\./.exec(
          dashboard.stdout,
        );
      expect(printed?.[2]).toBe(printed?.[1]);
      const step1 = dashboard.stdout.slice(
        dashboard.stdout.indexOf('     curl -sS -X POST'),
        dashboard.stdout.indexOf('\n  2. '),
      );
      await run('sh', ['-c', step1]);
      const pulls = `${dashboard.ready.api_url}/repos/${dashboard.ready.repository}/pulls?state=all`;
      const headers = { authorization: `token ${dashboard.ready.user.token}` };
      let listed: Array<{ number: number; title: string }> = [];
      const hello = ['Bump hello to 1.1.0 in dev', 'Promote hello 1.1.0 to staging'];
      for (let i = 0; i < 240 && !hello.every((title) => listed.some((pull) => pull.title === title)); i++) {
        listed = (await fetch(pulls, { headers }).then((response) => response.json())) as typeof listed;
        if (!hello.every((title) => listed.some((pull) => pull.title === title)))
          await new Promise((resolve) => setTimeout(resolve, 250));
      }
      expect(listed.map((pull) => pull.title)).toEqual(expect.arrayContaining(hello));
      // The issue the steps name is the dashboard, not one of the pull requests.
      const named = (await fetch(
        `${dashboard.ready.api_url}/repos/${dashboard.ready.repository}/issues/${printed![1]}`,
        { headers },
      ).then((response) => response.json())) as { title: string; pull_request?: unknown };
      expect(named).toMatchObject({ title: 'Escalator: environments' });
      expect(named.pull_request).toBeUndefined();
      expect(listed.map((pull) => pull.number)).not.toContain(Number(printed![1]));
      // Step 4, run as printed, finds the hello promotion by its branch and comments on it.
      const step4 = dashboard.stdout
        .slice(dashboard.stdout.indexOf('\n  4. '), dashboard.stdout.indexOf('\n  5. '))
        .split('\n')
        .slice(2)
        .join('\n');
      await run('sh', ['-c', step4]);
      const promotion = listed.find((pull) => pull.title === hello[1])!;
      const comments = (await fetch(
        `${dashboard.ready.api_url}/repos/${dashboard.ready.repository}/issues/${promotion.number}/comments`,
        { headers },
      ).then((response) => response.json())) as Array<{ body: string }>;
      expect(comments.map((comment) => comment.body)).toContain('/escalator plan');
    } finally {
      ways.at(-1)!.signal(sandboxes.at(-1)!);
      rmSync(repo, { recursive: true, force: true });
    }
    for (const [index, sandbox] of sandboxes.entries()) {
      try {
        await expectAllStopped(sandbox);
      } catch (error) {
        throw new Error(`${ways[index]!.name}: ${(error as Error).message}\n${sandbox.stderr().slice(-2000)}`, {
          cause: error,
        });
      }
    }
  }, 300_000);
});
