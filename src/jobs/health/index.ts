import type { JobDescriptor } from '../shared/descriptor.js';
import { healthKind } from './job.js';
import { processHealthJob } from './process.js';

/** Agent reports: one Redis fold each, then at most a few promote jobs enqueued. */
export const health = {
  ...healthKind,
  concurrency: 4,
  lock: 'shared',
  processor:
    ({ deps }) =>
    (data, context) =>
      processHealthJob(deps, data, context),
} satisfies JobDescriptor<typeof healthKind.schema>;
