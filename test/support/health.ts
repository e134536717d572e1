import { Redis } from 'ioredis';
import { GitHubClients } from '../../src/adapters/github/client.js';
import { RepoState } from '../../src/adapters/store/repo-state.js';
import { followHealth, type HealthFollowed } from '../../src/jobs/health/follow.js';
import type { JobDeps } from '../../src/jobs/shared/deps.js';
import { createLogger } from '../../src/observability/logger.js';
import type { AppHealth } from '../../src/planners/health.js';
import { Producer } from '../../src/queue/producer.js';
import { redisUrl, type Stack } from './stack.js';

/**
 * What the report-taking side does once it has folded an agent's report into an app's health:
 * record it (where `HealthStore.record` writes) and call `followHealth`. Tests put health in
 * through this one function, the folded record as given, so each case states exactly what is
 * recorded; a report through /agents/argocd goes through the fold instead.
 */
export interface HealthIntake {
  report(owner: string, repo: string, environment: string, app: string, health: AppHealth): Promise<HealthFollowed>;
  deps: JobDeps;
  close(): Promise<void>;
}

export function healthIntake(
  stack: Pick<Stack, 'sim' | 'prefix'>,
  onRequest?: ConstructorParameters<typeof GitHubClients>[0]['onRequest'],
): HealthIntake {
  const redis = new Redis(redisUrl);
  const producerRedis = new Redis(redisUrl, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
  const log = createLogger({ level: process.env.E2E_LOG_LEVEL ?? 'silent' });
  const deps: JobDeps = {
    log,
    github: new GitHubClients({
      appId: stack.sim.app.id,
      privateKey: stack.sim.app.privateKey,
      baseUrl: stack.sim.apiUrl,
      log,
      ...(onRequest ? { onRequest } : {}),
    }),
    store: new RepoState(redis, stack.prefix),
    producer: new Producer(producerRedis, stack.prefix),
    redis,
    debounceMs: 200,
    leaseMs: 30_000,
    now: () => new Date(),
  };
  return {
    deps,
    async report(owner, repo, environment, app, health) {
      const index = await deps.store.subscriptions.loadRepo(owner, repo);
      if (!index) throw new Error(`${owner}/${repo} is not indexed`);
      const previous = await deps.store.health.load(index, environment, app);
      // What HealthStore.record leaves after folding a report: the app's field in the repository's hash.
      await redis.hset(
        `${stack.prefix}:health:${owner.toLowerCase()}/${repo.toLowerCase()}`,
        `${environment}|${app}`,
        JSON.stringify(health),
      );
      return followHealth(deps, { index, environment, app, previous, current: health });
    },
    async close() {
      await redis.quit();
      await producerRedis.quit();
    },
  };
}
