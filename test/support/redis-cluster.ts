import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './net.js';

const run = promisify(execFile);

/** A throwaway Redis Cluster on 127.0.0.1: three masters, three replicas, nothing kept on disk. */
export interface LocalCluster {
  /** `redis+cluster://127.0.0.1:p1,…`, as REDIS_URL. */
  url: string;
  ports: number[];
  /** `redis-cli -p <port> <args>` and its output. */
  cli(port: number, ...args: string[]): Promise<string>;
  /** SIGKILL the master serving `key`'s slot and wait until its replica has taken over; returns the old and new master ports. */
  failMasterOf(key: string): Promise<{ killed: number; promoted: number }>;
  stop(): Promise<void>;
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`Redis Cluster: ${what} did not happen within ${timeoutMs} ms${last ? ` (${String(last)})` : ''}`);
}

/**
 * Starts six `redis-server --cluster-enabled yes` and joins them with
 * `redis-cli --cluster create … --cluster-replicas 1`. Needs redis-server and redis-cli on PATH
 * (.ci/run installs them); fails with that sentence when they are missing.
 */
export async function startCluster(): Promise<LocalCluster> {
  const dir = mkdtempSync(join(tmpdir(), 'escalator-cluster-'));
  const ports: number[] = [];
  for (let i = 0; i < 6; i++) {
    let port = await freePort();
    // The cluster bus listens on port + 10000; keep both below 65536 and distinct.
    while (port > 55_000 || ports.includes(port)) port = await freePort();
    ports.push(port);
  }
  const servers = new Map<number, ChildProcess>();
  const cli = async (port: number, ...args: string[]): Promise<string> =>
    (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args])).stdout.trim();
  for (const port of ports) {
    const server = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        join(dir, `nodes-${port}.conf`),
        '--cluster-node-timeout',
        '1500',
        '--save',
        '',
        '--appendonly',
        'no',
        '--dir',
        dir,
      ],
      { stdio: 'ignore' },
    );
    server.on('error', () => undefined);
    servers.set(port, server);
  }
  const stop = async (): Promise<void> => {
    for (const server of servers.values()) server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const port of ports)
      await until(`node ${port} to answer`, async () => ((await cli(port, 'ping')) === 'PONG' ? true : undefined));
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      '1',
      '--cluster-yes',
    ]);
    for (const port of ports)
      await until(`node ${port} to see the cluster ok`, async () =>
        (await cli(port, 'cluster', 'info')).includes('cluster_state:ok') ? true : undefined,
      );
    // A replica takes over only once it has synced with its master.
    await until('every master to have a synced replica', async () => {
      const slots = JSON.parse(await cli(ports[0]!, '--json', 'cluster', 'slots')) as unknown[][];
      return slots.length === 3 && slots.every((range) => range.length >= 4) ? true : undefined;
    });
    for (const port of ports) {
      const info = await cli(port, 'info', 'replication');
      if (info.includes('role:slave'))
        await until(`replica ${port} to sync`, async () =>
          (await cli(port, 'info', 'replication')).includes('master_link_status:up') ? true : undefined,
        );
    }
  } catch (error) {
    await stop();
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new Error(
        'redis-server and redis-cli are needed for the Redis Cluster tests: install redis-server (.ci/run does)',
        { cause: error },
      );
    throw error;
  }
  const live = (): number[] => ports.filter((port) => servers.has(port));
  return {
    url: `redis+cluster://${ports.map((port) => `127.0.0.1:${port}`).join(',')}`,
    ports,
    cli,
    async failMasterOf(key) {
      const slot = Number(await cli(live()[0]!, 'cluster', 'keyslot', key));
      const masterOf = async (): Promise<number | undefined> => {
        const slots = JSON.parse(await cli(live()[0]!, '--json', 'cluster', 'slots')) as Array<
          [number, number, [string, number]]
        >;
        for (const [from, to, master] of slots) if (slot >= from && slot <= to) return master[1];
        return undefined;
      };
      const killed = await until('the slot to have a master', masterOf);
      servers.get(killed)?.kill('SIGKILL');
      servers.delete(killed);
      const promoted = await until(
        'a replica to take over the slot',
        async () => {
          const now = await masterOf();
          return now !== undefined && now !== killed ? now : undefined;
        },
        30_000,
      );
      await until('the cluster to be ok again', async () =>
        (await cli(promoted, 'cluster', 'info')).includes('cluster_state:ok') ? true : undefined,
      );
      return { killed, promoted };
    },
    stop,
  };
}
