/**
 * Every kind of job, one descriptor each (`src/jobs/<kind>/index.ts`): the workers
 * (src/jobs/start-workers.ts) and the queue names are built from this table. Order: the queues'
 * order on /metrics and the admin UI.
 */
import { bump } from './bump/index.js';
import { command } from './command/index.js';
import { dashboard } from './dashboard/index.js';
import { diff } from './diff/index.js';
import { health } from './health/index.js';
import { image } from './image/index.js';
import { index } from './index/index.js';
import { landing } from './landing/index.js';
import { promote } from './promote/index.js';
import { recover } from './recover/index.js';
import { relay } from './relay/index.js';
import type { AnyJobDescriptor } from './shared/descriptor.js';

export const jobKinds = [
  image,
  bump,
  promote,
  command,
  diff,
  relay,
  index,
  recover,
  health,
  dashboard,
  landing,
] as const satisfies readonly AnyJobDescriptor[];

/** One queue per kind of job, so each has its own concurrency, attempts and backoff. */
export const queueNames = jobKinds.map((kind) => kind.name);
export type JobKindName = (typeof jobKinds)[number]['name'];
