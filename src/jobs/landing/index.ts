import type { JobDescriptor } from '../shared/descriptor.js';
import { landingKind } from './job.js';
import { processLandingJob } from './process.js';

/** A merged pull request: the configuration changes it brought wait for the next environments. */
export const landing = {
  ...landingKind,
  concurrency: 2,
  fairShare: true,
  lock: 'shared',
  processor:
    ({ deps }) =>
    (data, context) =>
      processLandingJob(deps, data, context),
} satisfies JobDescriptor<typeof landingKind.schema>;
