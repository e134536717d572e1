import type { Redis } from 'ioredis';

/** Which authors were already told a command was refused, per issue or pull request. */
export class RefusalStore {
  constructor(
    readonly redis: Redis,
    readonly prefix = 'escalator',
  ) {}

  /**
   * True the first time within `ttlMs` that `author` is refused on this issue or pull request:
   * a refusal is said once, so commenting again cannot make the bot comment again.
   */
  async firstRefusal(
    key: { owner: string; repo: string },
    issue: number,
    author: string,
    ttlMs: number,
  ): Promise<boolean> {
    const redisKey = `${this.prefix}:refused:${key.owner.toLowerCase()}/${key.repo.toLowerCase()}#${issue}:${author.toLowerCase()}`;
    return (await this.redis.set(redisKey, '1', 'PX', ttlMs, 'NX')) === 'OK';
  }
}
