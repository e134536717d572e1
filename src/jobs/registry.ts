import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import type { Env } from '../config/env.js';
import type { Logger } from '../observability/logger.js';

export interface WorkerDeps {
  env: Env;
  log: Logger;
  /** The workers' blocking connection (maxRetriesPerRequest: null). */
  connection: Redis;
}

/**
 * Every queue's worker is created here, so the worker role (src/main) only calls this.
 * Each feature adds its `create*Worker(deps)` to the list.
 */
export const workerFactories: Array<(deps: WorkerDeps) => Worker> = [];

export function startWorkers(deps: WorkerDeps): Worker[] {
  return workerFactories.map((factory) => factory(deps));
}
