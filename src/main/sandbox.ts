/**
 * `npm run sandbox`: the whole product on one machine, with only Redis.
 * 1. parse the options
 * 2. start the simulated GitHub, seed the GitOps repository, start Escalator (@escalator/github-sandbox/launch)
 * 3. print `SANDBOX_READY {json}` and the next steps
 * 4. stop everything on Ctrl-C (SIGINT) or SIGTERM, or when Escalator exits, and remove this
 *    run's Redis keys (each run has its own prefix)
 */
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { renderNextSteps, runSandbox } from '@escalator/github-sandbox/launch';
import type { Redis } from 'ioredis';
import { parseDuration } from '../config/repo-config.schema.js';
import { clusterSafePrefix, createRedis, waitForRedis } from '../queue/connection.js';

const root = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const usage = `Usage: npm run sandbox -- [options]

  --repo <dir>             folder seeded as example/gitops (default examples/gitops-repo)
  --github-port <port>     port of the simulated GitHub (default: a free port)
  --app-port <port>        port Escalator listens on (default 3000)
  --soak <duration>        every soak of the seeded .github/escalator.yml becomes this (30s, 2m),
                           to watch a soak end; your folder is not changed (default: its own soaks)
  --registry-token <token> token registries send to Escalator (default: random)
  --app-command <command>  how to start Escalator (default: node dist/main/index.js, or the sources via tsx)
`;

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(1);
}

function port(value: string | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  const number = Number(value);
  if (!Number.isInteger(number) || number < 0 || number > 65535)
    fail(`--${name} must be a port number (0-65535), not "${value}".\n\n${usage}`);
  return number;
}

let values: Record<string, string | boolean | undefined>;
try {
  ({ values } = parseArgs({
    options: {
      repo: { type: 'string' },
      'github-port': { type: 'string' },
      'app-port': { type: 'string' },
      'registry-token': { type: 'string' },
      soak: { type: 'string' },
      'app-command': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  }));
} catch (error) {
  fail(`${(error as Error).message}\n\n${usage}`);
}
if (values.help) {
  process.stdout.write(usage);
  process.exit(0);
}

const str = (key: string) => (typeof values[key] === 'string' ? (values[key] as string) : undefined);
const appCommand = str('app-command')?.split(' ').filter(Boolean);
const soak = str('soak');
if (soak !== undefined) {
  try {
    parseDuration(soak);
  } catch (error) {
    fail(`--soak: ${(error as Error).message}\n\n${usage}`);
  }
}

/** Removes every key of one sandbox run (its queues, index and leases) from a shared Redis. */
async function forgetRedisKeys(url: string, prefix: string): Promise<void> {
  const redis = createRedis(url, 'worker');
  redis.on('error', () => undefined);
  let removed = 0;
  try {
    await waitForRedis(redis, url);
    const cluster = redis as unknown as { nodes?: (role: 'master') => Redis[] };
    const nodes = typeof cluster.nodes === 'function' ? cluster.nodes('master') : [redis];
    for (const node of nodes) {
      for await (const keys of node.scanStream({ match: `${clusterSafePrefix(url, prefix)}:*`, count: 500 })) {
        if ((keys as string[]).length > 0) removed += await node.unlink(...(keys as string[]));
      }
    }
    process.stderr.write(`Removed this run's ${removed} Redis keys (prefix ${prefix}).\n`);
  } catch (error) {
    process.stderr.write(
      `Could not remove this run's Redis keys (prefix ${prefix}): ${(error as Error).message}. Remove them with: redis-cli --scan --pattern '${prefix}:*' | xargs redis-cli unlink\n`,
    );
  } finally {
    redis.disconnect();
  }
}

try {
  const sandbox = await runSandbox({
    repoDir: resolve(str('repo') ?? resolve(root, 'examples/gitops-repo')),
    githubPort: port(str('github-port'), 0, 'github-port'),
    appPort: port(str('app-port'), 3000, 'app-port'),
    root,
    env: process.env,
    ...(str('registry-token') ? { registryToken: str('registry-token') } : {}),
    ...(appCommand ? { appCommand } : {}),
    ...(soak !== undefined ? { soak } : {}),
    forgetRedisKeys,
  });
  const note = str('repo')
    ? 'The steps below are written for the shipped example (examples/gitops-repo); with --repo, adapt the image and pull request numbers.\n'
    : '';
  process.stdout.write(`SANDBOX_READY ${JSON.stringify(sandbox.ready)}\n${renderNextSteps(sandbox.ready)}${note}`);
  let stopping = false;
  const stop = (code: number) => {
    if (stopping) return;
    stopping = true;
    void sandbox.close().then(() => process.exit(code));
  };
  process.once('SIGINT', () => stop(0));
  process.once('SIGTERM', () => stop(0));
  void sandbox.appExited.then((code) => {
    if (!stopping) process.stderr.write(`Escalator exited (code ${code}); stopping the sandbox.\n`);
    stop(code ?? 1);
  });
} catch (error) {
  fail(`The sandbox could not start: ${(error as Error).message}`);
}
