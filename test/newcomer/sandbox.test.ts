/**
 * What a new user meets first: `npm run sandbox`, then the steps it prints, run as printed, in
 * order, twice on one Redis. Each step must answer as the printed text (and README.md) says; a
 * second sandbox on a taken port must say so instead of printing SANDBOX_READY; each run leaves
 * no Redis keys behind.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import type { SandboxReady } from '@escalator/github-sandbox/launch';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { testDelays } from '../support/delays.js';
import { freePort } from '../support/net.js';

const run = promisify(execFile);
const started: ChildProcess[] = [];

afterAll(() => {
  for (const child of started) {
    try {
      if (child.pid) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // the group is gone already
    }
  }
});

interface Sandbox {
  child: ChildProcess;
  ready: SandboxReady;
  stdout: string;
  stderr: () => string;
  exited: Promise<number | null>;
}

/** `npm run sandbox -- …` in its own process group, as in a terminal; resolves once the steps are printed. */
function startSandbox(args: string[]): Promise<Sandbox> {
  const child = spawn('npm', ['run', '--silent', 'sandbox', '--', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
    // The product's waits as the tests set them (the sandbox passes them on to Escalator).
    env: { ...process.env, ...testDelays, LOG_LEVEL: 'warn' },
  });
  started.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const lines: string[] = [];
  return new Promise((resolve, reject) => {
    let ready: SandboxReady | undefined;
    createInterface({ input: child.stdout! }).on('line', (line) => {
      lines.push(line);
      if (line.startsWith('SANDBOX_READY ')) ready = JSON.parse(line.slice('SANDBOX_READY '.length)) as SandboxReady;
      if (ready && line.includes('Press Ctrl-C'))
        resolve({ child, ready, stdout: lines.join('\n'), stderr: () => stderr, exited });
    });
    void exited.then((code) =>
      reject(Object.assign(new Error(`sandbox exited with ${code}`), { stdout: lines.join('\n'), stderr })),
    );
  });
}

interface Step {
  number: number;
  text: string;
  command: string;
}

/** The numbered steps as printed: a description, then one shell command (continued with `\`). */
function printedSteps(stdout: string): Step[] {
  const steps: Step[] = [];
  for (const line of stdout.split('\n')) {
    const header = /^ {2}(\d+)\. (.*)$/.exec(line);
    if (header) {
      steps.push({ number: Number(header[1]), text: header[2] ?? '', command: '' });
      continue;
    }
    const step = steps.at(-1);
    if (!step || !line.startsWith('     ')) continue;
    if (step.command === '' && !line.trimStart().startsWith('curl')) step.text += ` ${line.trim()}`;
    else step.command += `${step.command ? '\n' : ''}${line.trim()}`;
  }
  return steps;
}

/** Runs a printed command with `sh` exactly as printed, plus curl's status code on a last line. */
async function execute(step: Step): Promise<{ status: number; body: string }> {
  const { stdout } = await run('sh', ['-c', `${step.command} -w '\\n%{http_code}'`], { maxBuffer: 16 * 1024 * 1024 });
  const cut = stdout.lastIndexOf('\n');
  return { status: Number(stdout.slice(cut + 1)), body: stdout.slice(0, cut) };
}

/** Runs the step again (as a person would) until `check` passes; the last failure otherwise. */
async function until<T>(step: Step, check: (answer: { status: number; body: string }) => T, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const answer = await execute(step);
    try {
      return check(answer);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

type Json = Record<string, unknown>;

async function walkThePrintedSteps(sandbox: Sandbox): Promise<void> {
  const steps = printedSteps(sandbox.stdout);
  expect(steps.map((s) => s.number)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
  const [announce, pulls, soak, comment, comments, ci, relay, deliveries] = steps as [
    Step,
    Step,
    Step,
    Step,
    Step,
    Step,
    Step,
    Step,
  ];

  const announced = await execute(announce);
  expect(announced.status).toBe(202);
  // The answer says what will happen, or, when the sandbox's repository is not indexed yet at
  // step 1, that it cannot say yet; either way with the status path that gives the outcome.
  expect(JSON.parse(announced.body)).toMatchObject({
    accepted: 1,
    images: [
      expect.objectContaining({
        will: expect.stringMatching(/^(bump|unknown)$/),
        status: expect.stringMatching(/^\/registry\/distribution\/status\/image__/),
      }),
    ],
  });

  // 2: world 2.3.0, which dev ran when Escalator first read the repository, and hello 1.0.0, which
  // staging ran, are promoted at once (a promotion the plan calls ready is open); the bump merged
  // itself; its merge promotes hello 1.1.0. The first three race for numbers 1 to 3.
  const listed = await until(
    pulls,
    ({ status, body }) => {
      expect(status).toBe(200);
      const pullsListed = JSON.parse(body) as Json[];
      const rows = pullsListed.map((p) => [p.state, p.merged_at !== null, p.title]);
      expect(rows.sort()).toEqual([
        ['closed', true, 'Bump hello to 1.1.0 in dev'],
        ['open', false, 'Promote hello 1.0.0 to prod'],
        ['open', false, 'Promote hello 1.1.0 to staging'],
        ['open', false, 'Promote world 2.3.0 to staging'],
      ]);
      expect(pullsListed.map((p) => p.number).sort()).toEqual([1, 2, 3, 4]);
      return rows;
    },
    120_000,
  );
  expect(listed).toHaveLength(4);

  // 3: the soak gate, first in progress, then completed once the (--soak) soak has passed.
  const soakState = ({ status, body }: { status: number; body: string }) => {
    expect(status).toBe(200);
    const [run] = (JSON.parse(body) as { check_runs: Json[] }).check_runs;
    expect(run).toBeDefined();
    return [run?.status, run?.conclusion];
  };
  // (A loaded machine may open the hello promotion after the soak has passed: then only the end is seen.)
  const seen: string[] = [];
  await until(
    soak,
    (answer) => {
      const [status, conclusion] = soakState(answer);
      const state = `${String(status)}:${String(conclusion ?? '-')}`;
      if (seen.at(-1) !== state) seen.push(state);
      expect(state).toBe('completed:success');
    },
    120_000,
  );
  expect([['in_progress:-', 'completed:success'], ['completed:success']]).toContainEqual(seen);

  // 4 and 5: a person's `/escalator plan` is answered on the hello promotion, beside the rendered diff.
  // The person reads the rendered diff first: it is posted by a job of its own, which a loaded
  // machine may run after the soak has passed, so the comment waits for it.
  await until(comments, ({ status, body }) => {
    expect(status).toBe(200);
    const first = (JSON.parse(body) as Array<{ body: string }>)[0];
    expect(first?.body.split('\n')[0]).toBe('<!-- escalator:diff v1 -->');
  });
  const commented = await execute(comment);
  expect(commented.status).toBe(201);
  await until(comments, ({ status, body }) => {
    expect(status).toBe(200);
    const bodies = (JSON.parse(body) as Array<{ user: { login: string }; body: string }>).map(
      (c) => `${c.user.login}: ${c.body.split('\n')[0]}`,
    );
    expect(bodies).toEqual([
      'escalator[bot]: <!-- escalator:diff v1 -->',
      'developer: /escalator plan',
      expect.stringMatching(/^escalator\[bot\]: \*\*Escalator plan\*\*/),
    ]);
  });

  // 6: the CI API is on, with the printed token.
  const fromCi = await execute(ci);
  expect(fromCi.status).toBe(202);
  expect(JSON.parse(fromCi.body)).toMatchObject({ accepted: 1 });

  // 7: the relay is on: pushes reached the stand-in Argo CD, and the admin token reads the log.
  await until(relay, ({ status, body }) => {
    expect(status).toBe(200);
    const log = (JSON.parse(body) as { targets: Record<string, Json[]> }).targets['sandbox-argocd'] ?? [];
    expect(log.filter((entry) => entry.outcome === 'delivered').length).toBeGreaterThan(0);
  });

  // 8: a summary a person can read, not every payload.
  const summary = await execute(deliveries);
  expect(summary.status).toBe(200);
  const listedDeliveries = JSON.parse(summary.body) as Json[];
  expect(listedDeliveries.length).toBeGreaterThan(5);
  expect(listedDeliveries.filter((d) => 'payload' in d)).toEqual([]);
  expect(summary.body.length).toBeLessThan(32 * 1024);

  // The queue dashboard is on, behind the printed admin token.
  const dashboard = await fetch(`${sandbox.ready.app_url}/admin/queues`, {
    headers: { authorization: `Basic ${Buffer.from(`admin:${sandbox.ready.admin_token}`).toString('base64')}` },
  });
  expect(dashboard.status).toBe(200);
}

async function keysUnder(url: string, prefix: string): Promise<number> {
  const redis = new Redis(url);
  try {
    return (await redis.keys(`${prefix}:*`)).length;
  } finally {
    redis.disconnect();
  }
}

describe('a newcomer runs the sandbox and its printed steps', () => {
  it('works the same twice on one Redis, refuses a taken port, and leaves no keys behind', async () => {
    const appPort = await freePort();
    const prefixes: string[] = [];
    for (const attempt of [1, 2]) {
      const sandbox = await startSandbox(['--app-port', String(appPort), '--soak', '6s']);
      prefixes.push(sandbox.ready.redis_prefix);
      expect(sandbox.stdout).toContain('every soak of the seeded .github/escalator.yml is 6s');
      if (attempt === 1) {
        // A second sandbox on the same port says so; it never reports the first one's health as its own.
        const second = await startSandbox(['--app-port', String(appPort)]).then(
          () => ({ stdout: 'SANDBOX_READY', stderr: '' }),
          (error: { stdout: string; stderr: string }) => error,
        );
        expect(second.stdout).not.toContain('SANDBOX_READY');
        expect(second.stderr).toContain(`Port ${appPort} on 127.0.0.1 is already in use`);
        expect(second.stderr).toContain(`npm run sandbox -- --app-port ${appPort + 1}`);
      }
      await walkThePrintedSteps(sandbox);
      expect(await keysUnder(sandbox.ready.redis_url, sandbox.ready.redis_prefix)).toBeGreaterThan(0);
      // Ctrl-C, as in a terminal: SIGINT to the whole process group.
      process.kill(-sandbox.child.pid!, 'SIGINT');
      for (let i = 0; i < 120 && !sandbox.stderr().includes('Redis keys (prefix'); i++)
        await new Promise((resolve) => setTimeout(resolve, 250));
      expect(sandbox.stderr()).toContain(`Removed this run's`);
      expect(sandbox.stderr()).toContain(`Redis keys (prefix ${sandbox.ready.redis_prefix})`);
      await expect(fetch(`${sandbox.ready.app_url}/healthz`)).rejects.toThrow();
      expect(await keysUnder(sandbox.ready.redis_url, sandbox.ready.redis_prefix)).toBe(0);
    }
    expect(new Set(prefixes).size).toBe(2);
  }, 600_000);
});
