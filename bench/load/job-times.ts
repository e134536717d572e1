/**
 * When BullMQ ran the jobs of one event, read from the job hashes Escalator's queues keep after
 * completion (a day for image and bump jobs, src/queue/enqueue.ts): where an event's time went
 * between intake's answer and its pull request. Read once after the drain; nothing is polled.
 */
import type { Redis } from 'ioredis';

export interface JobTimes {
  /** When the job was added (for a debounced bump, the last reschedule's add), `Date.now()` ms. */
  addedAt: number;
  processedAt?: number;
  finishedAt?: number;
}

async function scanKeys(redis: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', pattern, 'COUNT', 2000);
    cursor = next;
    keys.push(...found);
  } while (cursor !== '0');
  return keys;
}

async function readTimes(
  redis: Redis,
  keys: string[],
): Promise<Array<{ key: string; data: string | null } & JobTimes>> {
  const pipeline = redis.pipeline();
  for (const key of keys) pipeline.hmget(key, 'data', 'timestamp', 'processedOn', 'finishedOn');
  const answers = (await pipeline.exec()) ?? [];
  return keys.map((key, i) => {
    const [data = null, timestamp, processedOn, finishedOn] = (answers[i]?.[1] as Array<string | null>) ?? [];
    return {
      key,
      data,
      addedAt: Number(timestamp),
      ...(processedOn ? { processedAt: Number(processedOn) } : {}),
      ...(finishedOn ? { finishedAt: Number(finishedOn) } : {}),
    };
  });
}

/** The image job of each `image:tag` asked for (an image as `ghcr.io/load/…`). */
export async function imageJobTimes(redis: Redis, prefix: string, wanted: Set<string>): Promise<Map<string, JobTimes>> {
  const keys = (await scanKeys(redis, `${prefix}:image:image__*`)).filter((key) => !/:(lock|logs)$/.test(key));
  const found = new Map<string, JobTimes>();
  for (const job of await readTimes(redis, keys)) {
    if (!job.data) continue;
    const event = (JSON.parse(job.data) as { event?: { registry?: string; repository?: string; tag?: string } }).event;
    if (!event?.repository || !event.tag) continue;
    for (const name of [event.repository, `${event.registry ?? ''}/${event.repository}`])
      if (wanted.has(`${name}:${event.tag}`)) found.set(`${name}:${event.tag}`, job);
  }
  return found;
}

/** Every bump job of one (repository, environment, app) Redis still holds, oldest first. */
export async function bumpJobTimes(
  redis: Redis,
  prefix: string,
  target: { owner: string; repo: string; environment: string; app: string },
): Promise<JobTimes[]> {
  const keys = (
    await scanKeys(
      redis,
      `${prefix}:bump:bump__${target.owner}__${target.repo}__${target.environment}__${target.app}__*`,
    )
  ).filter((key) => !/:(lock|logs)$/.test(key));
  return (await readTimes(redis, keys)).sort((a, b) => a.addedAt - b.addedAt);
}
