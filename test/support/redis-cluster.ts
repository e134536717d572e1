import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './net.js';

const run = promisify(execFile);

/**
 * A throwaway Redis Cluster on 127.0.0.1: three masters, three replicas; nothing kept on disk
 * unless asked (`appendonly`, for bench/chaos.ts, which also kills and restarts nodes).
 */
export interface LocalCluster {
  /** `redis+cluster://127.0.0.1:p1,…`, as REDIS_URL. */
  url: string;
  ports: number[];
  /** `redis-cli -p <port> <args>` and its output. */
  cli(port: number, ...args: string[]): Promise<string>;
  /** SIGKILL the master serving `key`'s slot and wait until its replica has taken over; returns the old and new master ports. */
  failMasterOf(key: string): Promise<{ killed: number; promoted: number }>;
  /**
   * `CLUSTER FAILOVER` on the replica of the master serving `key`'s slot (the replica catches up
   * first, then takes over); returns once the old master follows the new one, synced.
   */
  failoverMasterOf(key: string): Promise<{ demoted: number; promoted: number }>;
  /** Start a node killed by `failMasterOf` again, on its port and nodes file; waits until it is a synced replica. */
  restart(port: number): Promise<void>;
  /** Pids of the running nodes (to kill them if the caller dies). */
  pids(): number[];
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** Where the nodes' files and logs go; default a fresh temporary directory, removed by `stop()`. */
  dir?: string;
  /** `--appendonly yes` on every node; default no. */
  appendonly?: boolean;
  /** `--cluster-node-timeout`, how long a node may not answer before its replica takes over; default 1500. */
  nodeTimeoutMs?: number;
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
export async function startCluster(options: ClusterOptions = {}): Promise<LocalCluster> {
  const dir = options.dir ?? mkdtempSync(join(tmpdir(), 'escalator-cluster-'));
  mkdirSync(dir, { recursive: true });
  const ports: number[] = [];
  for (let i = 0; i < 6; i++) {
    let port = await freePort();
    // The cluster bus listens on port + 10000; keep both below 65536 and distinct.
    while (port > 55_000 || ports.includes(port)) port = await freePort();
    ports.push(port);
  }
  const servers = new Map<number, ChildProcess>();
  const cli = async (port: number, ...args: string[]): Promise<string> =>
    (await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], { timeout: 10_000 })).stdout.trim();
  const startNode = (port: number): void => {
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
        String(options.nodeTimeoutMs ?? 1500),
        '--save',
        '',
        '--appendonly',
        options.appendonly ? 'yes' : 'no',
        // Redis 7 keeps the append-only files in `appenddirname` under `--dir`: one per node.
        ...(options.appendonly ? ['--appenddirname', `appendonly-${port}`] : []),
        '--maxmemory-policy',
        'noeviction',
        '--logfile',
        join(dir, `redis-${port}.log`),
        '--dir',
        dir,
      ],
      { stdio: 'ignore' },
    );
    server.on('error', () => undefined);
    servers.set(port, server);
  };
  for (const port of ports) startNode(port);
  const stop = async (): Promise<void> => {
    for (const server of servers.values()) server.kill('SIGKILL');
    if (!options.dir) rmSync(dir, { recursive: true, force: true });
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
  /** The master and (first) replica serving `slot`, as `CLUSTER SLOTS` says. */
  const serving = async (slot: number): Promise<{ master: number; replica?: number } | undefined> => {
    const slots = JSON.parse(await cli(live()[0]!, '--json', 'cluster', 'slots')) as Array<
      [number, number, [string, number], [string, number]?]
    >;
    for (const [from, to, master, replica] of slots)
      if (slot >= from && slot <= to) return { master: master[1], ...(replica ? { replica: replica[1] } : {}) };
    return undefined;
  };
  const syncedReplica = (port: number): Promise<true> =>
    until(`node ${port} to be a synced replica`, async () => {
      const info = await cli(port, 'info', 'replication');
      return info.includes('role:slave') && info.includes('master_link_status:up') ? true : undefined;
    });
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
    async failoverMasterOf(key) {
      const slot = Number(await cli(live()[0]!, 'cluster', 'keyslot', key));
      const before = await until('the slot to have a master and a replica', async () => {
        const now = await serving(slot);
        return now?.replica === undefined ? undefined : (now as { master: number; replica: number });
      });
      await cli(before.replica, 'cluster', 'failover');
      await until(
        'the replica to take over the slot',
        async () => ((await serving(slot))?.master === before.replica ? true : undefined),
        30_000,
      );
      await syncedReplica(before.master);
      return { demoted: before.master, promoted: before.replica };
    },
    async restart(port) {
      if (servers.has(port)) throw new Error(`Redis Cluster: node ${port} is still running; kill it first`);
      startNode(port);
      await until(`node ${port} to answer`, async () => ((await cli(port, 'ping')) === 'PONG' ? true : undefined));
      await syncedReplica(port);
      await until('the cluster to be ok again', async () =>
        (await cli(port, 'cluster', 'info')).includes('cluster_state:ok') ? true : undefined,
      );
    },
    pids: () => [...servers.values()].flatMap((server) => (server.pid === undefined ? [] : [server.pid])),
    stop,
  };
}
