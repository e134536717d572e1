import type { JobDescriptor } from '../shared/descriptor.js';
import { indexKind } from './job.js';
import { processIndexJob, processResyncJob } from './process.js';

/** The subscription index: one repository, or every repository after Redis lost the index. */
export const index = {
  ...indexKind,
  concurrency: 2,
  lock: 'shared',
  processor:
    ({ deps }) =>
    (data, context) =>
      'owner' in data ? processIndexJob(deps, data, context) : processResyncJob(deps, data, context),
} satisfies JobDescriptor<typeof indexKind.schema>;
