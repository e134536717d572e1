import { randomUUID } from 'node:crypto';
import type { Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RepoState } from '../../src/adapters/store/repo-state.js';
import type { RepoIndex } from '../../src/adapters/store/subscriptions.js';
import { parseRepoConfig } from '../../src/config/repo-config.js';
import { processImageJob } from '../../src/jobs/image/process.js';
import type { JobDeps } from '../../src/jobs/shared/deps.js';
import { IndexMissingError } from '../../src/observability/errors.js';
import { createLogger } from '../../src/observability/logger.js';
import { enqueueResync } from '../../src/queue/enqueue.js';
import { ImageJob } from '../../src/queue/enqueue.js';
import { Producer } from '../../src/queue/producer.js';
import { deleteKeys, redisUrl } from '../support/stack.js';

/**
 * An image event that arrives while the subscription index is being rebuilt (real Redis, the job
 * called directly). The scale-out run showed it: the rebuild had read one repository of two, the
 * event fanned out to that one only, and the other never got the newest image. It waits for the
 * rebuild now, and fans out to every repository once the index is marked built.
 */
describe('an image event during a rebuild of the subscription index (real Redis)', () => {
  const log = createLogger({ level: 'silent' });
  const prefix = `image-rebuild-${randomUUID().slice(0, 8)}`;
  let redis: Redis;
  let store: RepoState;
  let producer: Producer;
  let deps: JobDeps;
  const parsed = parseRepoConfig(
    'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n',
  );
  if (!parsed.ok) throw new Error('the test configuration is invalid');
  const indexOf = (repo: string): RepoIndex => ({
    installationId: 7,
    owner: 'developer',
    repo,
    defaultBranch: 'main',
    sha: 'a'.repeat(40),
    config: parsed.config,
    problems: [],
    files: [
      {
        environment: 'dev',
        app: 'api',
        path: 'apps/api/overlays/dev/kustomization.yaml',
        images: ['ghcr.io/example/api'],
        versions: [{ name: 'ghcr.io/example/api', tag: '1.0.0' }],
      },
    ],
  });
  const job = (tag: string) =>
    ImageJob.parse({
      event: {
        registry: 'ghcr.io',
        repository: 'ghcr.io/example/api',
        tag,
        source: 'ci',
        deliveryId: `delivery-${tag}`,
        receivedAt: new Date().toISOString(),
      },
      scope: { by: 'test', owners: '*' },
    });
  const context = { job: {} as Job, log };

  beforeAll(async () => {
    redis = new Redis(redisUrl);
    await redis.ping();
    store = new RepoState(redis, prefix);
    producer = new Producer(redis, prefix);
    deps = { log, store, producer, redis, debounceMs: 60_000, leaseMs: 30_000, now: () => new Date() } as JobDeps;
  });
  afterAll(async () => {
    await producer?.close();
    await deleteKeys(redis, `${prefix}:*`);
    await redis?.quit();
  });

  it('waits while a rebuild that has read some repositories runs, then fans out to all of them', async () => {
    await enqueueResync(producer, 'index missing');
    await store.subscriptions.saveRepo(indexOf('alpha'));
    await expect(processImageJob(deps, job('1.12.0'), context)).rejects.toBeInstanceOf(IndexMissingError);
    expect(await producer.queue('bump').count()).toBe(0);

    // The rebuild reads the second repository, marks the index built and is forgotten.
    await store.subscriptions.saveRepo(indexOf('beta'));
    await store.subscriptions.markBuilt();
    await (await producer.queue('index').getJob('resync'))?.remove();
    const result = await processImageJob(deps, job('1.12.0'), context);
    expect(result).toMatchObject({ scheduled: 2 });
    expect(('targets' in result ? result.targets : []).map((target) => target.repo).sort()).toEqual(['alpha', 'beta']);
  });
});
