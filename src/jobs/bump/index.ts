import type { JobDescriptor } from '../shared/descriptor.js';
import { bumpKind } from './job.js';
import { processBumpJob, reportBumpFailure } from './process.js';

/** Bring one (repository, environment, app) up to the images waiting for it. */
export const bump = {
  ...bumpKind,
  concurrency: 4,
  fairShare: true,
  lock: 'shared',
  processor:
    ({ deps }) =>
    (data, context) =>
      processBumpJob(deps, data, context),
  onFinalFailure:
    ({ deps }) =>
    (data, error) =>
      reportBumpFailure(deps, data, error),
} satisfies JobDescriptor<typeof bumpKind.schema>;
