import type { Redis } from 'ioredis';

/**
 * What to do with a refused command: `reply` (say why, once), `repeated` (this person was told in
 * this repository already), `capped` (the installation's replies to people without write access
 * are spent for the hour).
 */
export type RefusalAdmission = 'reply' | 'repeated' | 'capped';

/**
 * One script, so two workers cannot both admit the last reply of the hour. KEYS[1]: the person in
 * this repository (its value is the job that was admitted: the same job run again after a delay
 * replies without counting twice); KEYS[2]: the installation's replies of the last hour, a sorted
 * set scored on Redis's clock (as the write budget is), so every worker agrees.
 */
const ADMIT = `
local told = redis.call('GET', KEYS[1])
if told then
  if told == ARGV[2] then return 'reply' end
  return 'repeated'
end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - 3600000)
if redis.call('ZCARD', KEYS[2]) >= tonumber(ARGV[1]) then return 'capped' end
redis.call('ZADD', KEYS[2], now, ARGV[2])
redis.call('PEXPIRE', KEYS[2], 3600000)
redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
return 'reply'
`;

/** Which people were told their command was refused, per repository, and how many replies each installation wrote this hour. */
export class RefusalStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  /**
   * Whether the refusal of `author`'s command (job `jobId`) is answered: once per person and
   * repository within `ttlMs`, and at most `perHour` replies per installation in any hour. A
   * person refused when the cap is spent is not remembered, so a later command of theirs may be
   * answered once the hour has room again.
   */
  async admit(
    key: { installationId: number; owner: string; repo: string },
    author: string,
    jobId: string,
    limits: { ttlMs: number; perHour: number },
  ): Promise<RefusalAdmission> {
    // Hash-tagged by installation, as the write budget is, so a Redis Cluster keeps both keys on one slot.
    const tag = `{${key.installationId}}`;
    const answer = await this.redis.eval(
      ADMIT,
      2,
      `${this.prefix}:refused:${tag}:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}:${author.toLowerCase()}`,
      `${this.prefix}:refusal-replies:${tag}`,
      limits.perHour,
      jobId,
      limits.ttlMs,
    );
    return answer as RefusalAdmission;
  }
}
