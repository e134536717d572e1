import type { JobDescriptor } from '../shared/descriptor.js';
import { imageKind } from './job.js';
import { processImageJob } from './process.js';

/** An image was published: fan it out to the repositories that use it. */
export const image = {
  ...imageKind,
  concurrency: 8,
  lock: 'shared',
  processor:
    ({ deps }) =>
    (data, context) =>
      processImageJob(deps, data, context),
} satisfies JobDescriptor<typeof imageKind.schema>;
