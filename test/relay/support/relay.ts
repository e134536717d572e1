import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { createRequire } from 'node:module';
import type { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { Registry } from 'prom-client';
import { GitHubClients } from '../../../src/adapters/github/client.js';
import { RepoState } from '../../../src/adapters/store/repo-state.js';
import { RelayStore } from '../../../src/queue/relay-store.js';
import { RelayTargetConfig, toTarget, type RelayTarget } from '../../../src/config/relay-targets.js';
import { createRelayDeps, processRelayJob } from '../../../src/jobs/relay/process.js';
import { RelayJob } from '../../../src/queue/enqueue.js';
import { enqueueRelay, type RelayInput } from '../../../src/queue/relay-schedule.js';
import { createWorker } from '../../../src/queue/worker.js';
import { createLogger, type Logger } from '../../../src/observability/logger.js';
import { createRedis, waitForRedis } from '../../../src/queue/connection.js';
import { Producer } from '../../../src/queue/producer.js';
import { redisUrl } from '../../support/redis.js';

export { redisUrl };

/** A real push payload (from @octokit/webhooks-examples) made to say what a test needs. */
const require = createRequire(import.meta.url);
const examples = require('@octokit/webhooks-examples/api.github.com/index.json') as Array<{
  name: string;
  examples: Array<Record<string, unknown>>;
}>;
const pushExample = examples
  .find((entry) => entry.name === 'push')!
  .examples.find((example) => (example.commits as unknown[]).length > 0)!;

/** The raw body of a push to `repository` changing `paths`, as GitHub would send it. */
export function pushBody(options: {
  repository?: string;
  ref?: string;
  paths: string[];
  n?: number;
  before?: string;
  after?: string;
}): string {
  const repository = options.repository ?? 'example/gitops';
  const [owner, name] = repository.split('/') as [string, string];
  const n = options.n ?? 1;
  const after = options.after ?? n.toString(16).padStart(40, 'a');
  const before = options.before ?? (n - 1).toString(16).padStart(40, 'a');
  const commit = {
    ...(pushExample.commits as Array<Record<string, unknown>>)[0],
    id: after,
    message: `Change ${n} — déploiement ✓`,
    added: [],
    modified: options.paths,
    removed: [],
  };
  return JSON.stringify({
    ...pushExample,
    ref: options.ref ?? 'refs/heads/main',
    before,
    after,
    commits: [commit],
    head_commit: commit,
    repository: {
      ...(pushExample.repository as Record<string, unknown>),
      name,
      full_name: repository,
      html_url: `https://github.com/${repository}`,
      default_branch: 'main',
      owner: {
        ...((pushExample.repository as Record<string, unknown>).owner as Record<string, unknown>),
        login: owner,
        name: owner,
      },
    },
  });
}

/** The input the GitHub webhook handler passes for a push. */
export function pushInput(options: {
  deliveryId?: string;
  repository?: string;
  ref?: string;
  paths: string[];
  n?: number;
  truncated?: boolean;
  installationId?: number;
  before?: string;
  after?: string;
}): RelayInput {
  const body = pushBody(options);
  const parsed = JSON.parse(body) as { before: string; after: string };
  return {
    deliveryId: options.deliveryId ?? randomUUID(),
    event: 'push',
    body,
    repository: options.repository ?? 'example/gitops',
    changedPaths: options.truncated ? null : options.paths,
    before: parsed.before,
    after: parsed.after,
    ...(options.installationId !== undefined ? { installationId: options.installationId } : {}),
  };
}

/** A target from config-shaped input, with the secret given directly. */
export function target(
  input: Omit<RelayTargetConfig, 'secret' | 'timeout' | 'coalesce' | 'backoff' | 'attempts' | 'paths' | 'events'> &
    Partial<Pick<RelayTargetConfig, 'paths' | 'events' | 'attempts' | 'sha1Signature'>> & {
      secret: string;
      timeout?: number;
      coalesce?: number;
      backoff?: number;
    },
): RelayTarget {
  const { secret, ...config } = input;
  const parsed = RelayTargetConfig.parse({ ...config, secret: { env: 'UNUSED' }, backoff: input.backoff ?? 20 });
  return toTarget(parsed, secret);
}

let sharedKey: string | undefined;
/** An RSA key for App clients that never reach GitHub. */
export function dummyPrivateKey(): string {
  sharedKey ??= generateKeyPairSync('rsa', { modulusLength: 2048 })
    .privateKey.export({ type: 'pkcs1', format: 'pem' })
    .toString();
  return sharedKey;
}

export interface RelayRig {
  prefix: string;
  producer: Producer;
  store: RelayStore;
  registry: Registry;
  worker: Worker;
  redis: Redis;
  log: Logger;
  enqueue(input: RelayInput): Promise<number>;
  close(): Promise<void>;
}

/** The relay as the product runs it — producer, Redis state, worker — under a random key prefix. */
export async function startRelay(
  targets: RelayTarget[],
  options: { github?: GitHubClients; concurrency?: number; log?: Logger } = {},
): Promise<RelayRig> {
  const prefix = `test-relay-${randomUUID()}`;
  const log = options.log ?? createLogger({ level: 'silent' });
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const producerRedis = createRedis(redisUrl, 'producer');
  await waitForRedis(producerRedis, redisUrl, 20_000);
  const producer = new Producer(producerRedis, prefix);
  const registry = new Registry();
  const github =
    options.github ??
    new GitHubClients({ appId: 1, privateKey: dummyPrivateKey(), baseUrl: 'http://127.0.0.1:9', log });
  const relayDeps = createRelayDeps(
    {
      log,
      github,
      store: new RepoState(redis, prefix),
      producer,
      redis,
      debounceMs: 0,
      leaseMs: 30_000,
      now: () => new Date(),
    },
    targets,
    { prefix, registry },
  );
  const worker = createWorker('relay', RelayJob, (data, context) => processRelayJob(relayDeps, data, context), {
    connection,
    prefix,
    log,
    concurrency: options.concurrency ?? 16,
  });
  await worker.waitUntilReady();
  return {
    prefix,
    producer,
    store: new RelayStore(redis, prefix),
    registry,
    worker,
    redis,
    log,
    enqueue: (input) => enqueueRelay(producer, input, targets, () => new Date()),
    async close() {
      await worker.close();
      await producer
        .queue('relay')
        .obliterate({ force: true })
        .catch(() => undefined);
      await producer.close();
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      await Promise.all([connection.quit(), redis.quit(), producerRedis.quit()]);
    },
  };
}

/** Poll until `check` returns a value other than undefined/false, or fail after `timeoutMs`. */
export async function eventually<T>(
  check: () => T | Promise<T>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined && value !== null && value !== false) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
