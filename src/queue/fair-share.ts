import type { Redis } from 'ioredis';

/**
 * Fair shares of a queue's workers between installations.
 *
 * BullMQ (without its paid groups) runs jobs in arrival order with one concurrency per queue, so
 * one installation's backlog of slow renders made another's diff wait minutes behind it. Before a
 * job runs it asks for a slot of its installation: an installation may hold at most `share` of the
 * queue's running jobs *while a job of another installation is waiting*; past that the job yields
 * (back to delayed for a moment, without using an attempt) and the waiting one runs. Alone on the
 * queue, an installation uses every worker.
 *
 * Slots live in one Redis set per queue (member `<installation>|<job id>`). A slot whose job
 * no longer holds its BullMQ lock (its worker was killed) is dropped on the next acquire, so a
 * crash never leaks a share. One Lua script decides atomically; it reads the wait list and the
 * job hashes under the queue's own key prefix, which shares the queue's hash slot on a cluster.
 */
const ACQUIRE = `
local slots, wait = KEYS[1], KEYS[2]
local jobPrefix, member, installation = ARGV[1], ARGV[2], ARGV[3]
local share, scan = tonumber(ARGV[4]), tonumber(ARGV[5])
local held = 0
for _, slot in ipairs(redis.call('SMEMBERS', slots)) do
  local bar = string.find(slot, '|', 1, true)
  local id = string.sub(slot, bar + 1)
  if redis.call('EXISTS', jobPrefix .. id .. ':lock') == 0 then
    redis.call('SREM', slots, slot)
  elseif string.sub(slot, 1, bar - 1) == installation and slot ~= member then
    held = held + 1
  end
end
if held >= share then
  -- both ends of the wait list: the jobs that run next, and the newest
  local waiting = redis.call('LRANGE', wait, -scan, -1)
  for _, id in ipairs(redis.call('LRANGE', wait, 0, scan - 1)) do table.insert(waiting, id) end
  for _, id in ipairs(waiting) do
    local data = redis.call('HGET', jobPrefix .. id, 'data')
    if data then
      local ok, decoded = pcall(cjson.decode, data)
      if ok and type(decoded) == 'table' and decoded.installationId ~= nil and tostring(decoded.installationId) ~= installation then
        return 0
      end
    end
  end
end
redis.call('SADD', slots, member)
return 1
`;

export interface FairShareOptions {
  /** BullMQ key prefix of the queues. */
  prefix: string;
  queue: string;
  /** Running jobs one installation may hold while another waits. */
  share: number;
  /** How many waiting jobs at each end of the wait list are looked at to find another installation. @default 100 */
  scan?: number;
}

export class FairShare {
  private readonly slots: string;
  private readonly wait: string;
  private readonly jobPrefix: string;

  constructor(
    private readonly redis: Redis,
    private readonly options: FairShareOptions,
  ) {
    this.jobPrefix = `${options.prefix}:${options.queue}:`;
    this.slots = `${this.jobPrefix}fair-slots`;
    this.wait = `${this.jobPrefix}wait`;
  }

  /** Take a slot for the job, or answer false when it should yield to another installation. */
  async acquire(installationId: number, jobId: string): Promise<boolean> {
    const granted = await this.redis.eval(
      ACQUIRE,
      2,
      this.slots,
      this.wait,
      this.jobPrefix,
      `${installationId}|${jobId}`,
      String(installationId),
      String(this.options.share),
      String(this.options.scan ?? 100),
    );
    return granted === 1;
  }

  async release(installationId: number, jobId: string): Promise<void> {
    await this.redis.srem(this.slots, `${installationId}|${jobId}`);
  }
}

/** The installation a job's data names, when it names one. */
export function installationOf(data: unknown): number | undefined {
  const id = (data as { installationId?: unknown } | null)?.installationId;
  return typeof id === 'number' && Number.isInteger(id) ? id : undefined;
}
