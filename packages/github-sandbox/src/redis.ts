import { spawn, type ChildProcess } from 'node:child_process';
import { createConnection, createServer, type AddressInfo } from 'node:net';

/** A Redis the sandbox can use, and how to let go of it. */
export interface RedisHandle {
  url: string;
  /** `env`: REDIS_URL; `local`: 127.0.0.1:6379 answered; `private`: a redis-server started for the sandbox. */
  source: 'env' | 'local' | 'private';
  stop(): Promise<void>;
  /** Resolves when a private redis-server exits (stopped, killed or crashed); never for the others. */
  exited: Promise<void>;
}

/** No Redis anywhere; the message says how to get one. */
export class RedisNotFoundError extends Error {
  constructor() {
    super(
      [
        'The sandbox needs Redis, and none was found: REDIS_URL is unset, nothing answers on 127.0.0.1:6379, and redis-server is not installed.',
        'Install it (Debian/Ubuntu: sudo apt-get install redis-server; Fedora: sudo dnf install redis; macOS: brew install redis),',
        'or point the sandbox at one: REDIS_URL=redis://host:6379 npm run sandbox',
      ].join('\n'),
    );
    this.name = 'RedisNotFoundError';
  }
}

/** Sends PING and waits for +PONG (or an auth error, which still proves a Redis listens). */
export function pingRedis(host: string, port: number, timeoutMs = 500): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port });
    const done = (answer: boolean) => {
      socket.destroy();
      resolve(answer);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.once('data', (data) => done(/^(\+PONG|-NOAUTH)/.test(data.toString('utf8'))));
  });
}

/** Asks the OS for a free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

/**
 * Finds Redis the way the sandbox promises: `REDIS_URL` when set; otherwise 127.0.0.1:6379 when
 * it answers; otherwise a private `redis-server` (no persistence) on a free port.
 */
export async function findRedis(
  env: NodeJS.ProcessEnv,
  options: { binary?: string; localPort?: number } = {},
): Promise<RedisHandle> {
  const none = async () => undefined;
  const never = new Promise<void>(() => undefined);
  const local = options.localPort ?? 6379;
  if (env.REDIS_URL) return { url: env.REDIS_URL, source: 'env', stop: none, exited: never };
  if (await pingRedis('127.0.0.1', local))
    return { url: `redis://127.0.0.1:${local}`, source: 'local', stop: none, exited: never };
  const port = await freePort();
  const child = await startRedisServer(options.binary ?? 'redis-server', port);
  if (!child) throw new RedisNotFoundError();
  return {
    url: `redis://127.0.0.1:${port}`,
    source: 'private',
    stop: () => stopChild(child),
    exited: new Promise<void>((resolve) =>
      child.exitCode !== null || child.signalCode !== null ? resolve() : child.once('exit', () => resolve()),
    ),
  };
}

async function startRedisServer(binary: string, port: number): Promise<ChildProcess | null> {
  const child = spawn(
    binary,
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--save',
      '',
      '--appendonly',
      'no',
      '--maxmemory-policy',
      'noeviction',
    ],
    {
      stdio: 'ignore',
    },
  );
  let gone = false;
  const failed = new Promise<null>((resolve) => {
    const fail = () => {
      gone = true;
      resolve(null);
    };
    child.once('error', fail);
    child.once('exit', fail);
  });
  const ready = (async () => {
    for (let attempt = 0; attempt < 50 && !gone; attempt++) {
      if (await pingRedis('127.0.0.1', port)) return child;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    child.kill('SIGKILL');
    return null;
  })();
  return Promise.race([ready, failed]);
}

/** Sends SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
export function stopChild(child: ChildProcess, graceMs = 10_000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
