/**
 * The processes the chaos run starts and kills: a private Redis with an append-only file, and
 * Escalator web and worker processes.
 *
 * Escalator runs as one OS process per role instance, started as the tests start theirs
 * (`spawnEscalator`, test/support/stack.ts): the pid that is killed is the pid that runs Escalator.
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdirSync, openSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { spawnEscalator } from '../../test/support/stack.js';
import { sleep } from '../support/stats.js';

const run = promisify(execFile);

/** A port nobody listens on right now (127.0.0.1). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Poll until `check` resolves true, or throw after `timeoutMs` naming `what`. */
export async function waitUntil(
  check: () => Promise<boolean>,
  what: string,
  timeoutMs: number,
  everyMs = 100,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(everyMs);
  }
}

function exitOf(child: ChildProcess): Promise<number | null> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (code) => resolve(code));
  });
}

/**
 * `redis-server --appendonly yes` in its own directory on a free port, run as a child process
 * (not daemonized) so its pid is ours. `restart()` is `redis-cli shutdown` (which writes the AOF)
 * followed by a start of the same server on the same directory: the data must survive.
 */
export class PrivateRedis {
  private child: ChildProcess | undefined;

  constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get up(): boolean {
    return Boolean(this.child && this.child.exitCode === null && this.child.signalCode === null);
  }

  async start(): Promise<void> {
    mkdirSync(this.dir, { recursive: true });
    const log = openSync(join(this.dir, 'redis.log'), 'a');
    this.child = spawn(
      'redis-server',
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--appendonly',
        'yes',
        '--save',
        '',
        '--maxmemory-policy',
        'noeviction',
      ],
      { stdio: ['ignore', log, log] },
    );
    closeSync(log);
    await waitUntil(
      async () => (await this.cli('ping')).trim() === 'PONG',
      `redis-server on port ${this.port}`,
      20_000,
    );
  }

  /** `redis-cli shutdown`: Redis flushes the append-only file and exits. */
  async shutdown(): Promise<void> {
    const child = this.child;
    if (!child) return;
    await this.cli('shutdown').catch(() => undefined); // the connection closes as the server exits
    await Promise.race([exitOf(child), sleep(15_000)]);
    if (this.up) throw new Error(`redis-server (pid ${child.pid}) did not exit after SHUTDOWN`);
  }

  /**
   * SIGKILL: no SHUTDOWN, no final AOF flush. What Redis answered has been written to the AOF
   * (it writes before it replies; the default `appendfsync everysec` only delays the fsync, which
   * matters for a machine crash, not a process kill), so every accepted job must survive.
   */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || !this.up) return;
    child.kill('SIGKILL');
    await Promise.race([exitOf(child), sleep(15_000)]);
    if (this.up) throw new Error(`redis-server (pid ${child.pid}) did not exit after SIGKILL`);
  }

  /** Stop for good at the end of the run: no data needs to survive. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child || !this.up) return;
    await this.cli('shutdown', 'nosave').catch(() => undefined);
    await Promise.race([exitOf(child), sleep(5_000)]);
    if (this.up && child.pid) process.kill(child.pid, 'SIGKILL');
  }

  /** The pid to kill if the run itself dies. */
  get pid(): number | undefined {
    return this.up ? this.child?.pid : undefined;
  }

  private async cli(...args: string[]): Promise<string> {
    const { stdout } = await run('redis-cli', ['-p', String(this.port), ...args], { timeout: 5_000 });
    return stdout;
  }
}

export type Role = 'web' | 'worker';

/** One Escalator process. */
export interface EscalatorProcess {
  role: Role;
  /** Stable name, e.g. `web-0`, `worker-4` (workers get a new number on each start). */
  name: string;
  port: number;
  url: string;
  child: ChildProcess;
  exited: Promise<number | null>;
}

/**
 * When the bench process itself ends (an exception, Ctrl-C), SIGKILL what it started: the pids
 * `pids()` names at that moment. Ctrl-C and SIGTERM end the bench with the usual exit codes.
 */
export function killOnExit(pids: () => number[]): void {
  const emergency = (): void => {
    for (const pid of pids()) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  };
  process.once('exit', emergency);
  process.once('SIGINT', () => process.exit(130));
  process.once('SIGTERM', () => process.exit(143));
}

/**
 * Escalator web and worker processes sharing one environment. Webs keep their port across
 * restarts (the simulator's webhook URL and the registry's endpoint stay valid); each worker
 * start is a new process with a new name. Logs go to `<logDir>/<name>.log`.
 */
export class Fleet {
  readonly webs: EscalatorProcess[] = [];
  readonly workers: EscalatorProcess[] = [];
  private nextWorker = 0;

  constructor(
    private readonly env: Record<string, string>,
    private readonly logDir: string,
  ) {}

  async startWeb(index: number, port?: number): Promise<EscalatorProcess> {
    const chosen = port ?? (await freePort());
    const web = this.spawn('web', `web-${index}`, chosen);
    this.webs[index] = web;
    await waitUntil(
      async () => (await fetch(`${web.url}/healthz`, { signal: AbortSignal.timeout(2_000) })).ok,
      `${web.name} to answer /healthz`,
      60_000,
      200,
    );
    return web;
  }

  /** A new worker process; it is not waited for (its first jobs show it is up). */
  startWorker(): EscalatorProcess {
    const worker = this.spawn('worker', `worker-${this.nextWorker++}`, 0);
    this.workers.push(worker);
    return worker;
  }

  /** SIGKILL a worker (no graceful shutdown: its active jobs are stalled until the lock expires). */
  async killWorker(index: number): Promise<EscalatorProcess> {
    const [worker] = this.workers.splice(index, 1);
    if (!worker) throw new Error(`no worker at index ${index}`);
    worker.child.kill('SIGKILL');
    await worker.exited;
    return worker;
  }

  /** Stop a web process with `signal` and start it again on the same port. */
  async restartWeb(index: number, signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
    const web = this.webs[index];
    if (!web) throw new Error(`no web process at index ${index}`);
    web.child.kill(signal);
    await Promise.race([web.exited, sleep(20_000)]);
    if (web.child.exitCode === null && web.child.signalCode === null) {
      web.child.kill('SIGKILL');
      await web.exited;
    }
    await this.startWeb(index, web.port);
  }

  /** Every pid still running (for the emergency exit handler). */
  pids(): number[] {
    return [...this.webs, ...this.workers]
      .filter((p) => p.child.exitCode === null && p.child.signalCode === null && p.child.pid)
      .map((p) => p.child.pid as number);
  }

  /** SIGTERM everything (graceful), then SIGKILL what is left after `graceMs`. */
  async stopAll(graceMs = 10_000): Promise<void> {
    const all = [...this.webs, ...this.workers];
    for (const p of all) p.child.kill('SIGTERM');
    await Promise.race([Promise.all(all.map((p) => p.exited)), sleep(graceMs)]);
    for (const p of all) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(all.map((p) => p.exited));
  }

  private spawn(role: Role, name: string, port: number): EscalatorProcess {
    const log = openSync(join(this.logDir, `${name}.log`), 'a');
    const child = spawnEscalator(role, this.env, { port, stdio: ['ignore', log, log] });
    closeSync(log);
    return { role, name, port, url: `http://127.0.0.1:${port}`, child, exited: exitOf(child) };
  }
}
