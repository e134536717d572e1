import type { Redis } from 'ioredis';
import { type AppHealth, foldReport, type HealthReport } from '../../planners/health.js';
import type { RepoKey } from './subscriptions.js';

/** The outcome of recording one report. */
export interface HealthRecord {
  /** Whether what is recorded changed (a report older than the recorded one, or a repeat, changes nothing). */
  changed: boolean;
  previous?: AppHealth;
  current: AppHealth;
}

/**
 * Write `ARGV[2]` into field `ARGV[1]` only when the field still holds `ARGV[3]` (`''`: absent).
 * A compare-and-set on one field, so two workers folding reports for one app never lose one.
 */
const COMPARE_AND_SET = `
local now = redis.call('HGET', KEYS[1], ARGV[1])
if (now or '') ~= ARGV[3] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('EXPIRE', KEYS[1], tonumber(ARGV[4]))
return 1
`;

/** How long a repository's health is kept after its last report (agents report again on every sync). */
const HEALTH_TTL_SECONDS = 90 * 24 * 60 * 60;

/**
 * How many times a record is re-folded when another writer wrote the same app meanwhile. Each
 * failed attempt means another writer's attempt succeeded, so N writers at once need at most N.
 */
const MAX_ATTEMPTS = 64;

/**
 * The sync and health of each (repository, environment, app), folded from the agents' reports
 * (`foldReport`). One hash per repository under the store prefix (hash-tagged as a whole in
 * Redis Cluster, like every key of `RepoState`), one field per `environment|app`.
 */
export class HealthStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  #key(key: Pick<RepoKey, 'owner' | 'repo'>): string {
    return `${this.prefix}:health:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}`;
  }

  /** What is recorded for the app in the environment, if any agent reported on it. */
  async load(key: Pick<RepoKey, 'owner' | 'repo'>, environment: string, app: string): Promise<AppHealth | undefined> {
    const text = await this.redis.hget(this.#key(key), `${environment}|${app}`);
    return text ? (JSON.parse(text) as AppHealth) : undefined;
  }

  /** Everything recorded for a repository, keyed `environment|app`. */
  async loadAll(key: Pick<RepoKey, 'owner' | 'repo'>): Promise<Record<string, AppHealth>> {
    const fields = await this.redis.hgetall(this.#key(key));
    return Object.fromEntries(Object.entries(fields).map(([field, text]) => [field, JSON.parse(text) as AppHealth]));
  }

  /**
   * Fold `report` into what is recorded for its environment and app, atomically: read, fold,
   * and write only if nobody wrote meanwhile (else read and fold again).
   */
  async record(key: Pick<RepoKey, 'owner' | 'repo'>, report: HealthReport, tolerateMs: number): Promise<HealthRecord> {
    const redisKey = this.#key(key);
    const field = `${report.environment}|${report.app}`;
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt++) {
      const before = (await this.redis.hget(redisKey, field)) ?? '';
      const previous = before ? (JSON.parse(before) as AppHealth) : undefined;
      const current = foldReport(previous, report, tolerateMs);
      const after = JSON.stringify(current);
      if (after === before) return { changed: false, ...(previous ? { previous } : {}), current };
      const written = await this.redis.eval(COMPARE_AND_SET, 1, redisKey, field, after, before, HEALTH_TTL_SECONDS);
      if (written === 1) return { changed: true, ...(previous ? { previous } : {}), current };
    }
    throw new Error(
      `Health of ${report.environment}/${report.app} in ${key.owner}/${key.repo} changed under ${MAX_ATTEMPTS} attempts in a row; the job is retried.`,
    );
  }
}
