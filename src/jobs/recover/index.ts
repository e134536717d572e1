import type { JobDescriptor } from '../shared/descriptor.js';
import { recoverKind } from './job.js';
import { processRecoverJob } from './process.js';

/** Missed-delivery recovery: GitHub does not retry a failed webhook delivery by itself. */
export const recover = {
  ...recoverKind,
  concurrency: 1,
  lock: 'shared',
  processor:
    ({ deps, env }) =>
    (data, context) =>
      processRecoverJob({ ...deps, recoverEveryMs: env.ESCALATOR_RECOVER_EVERY_MS }, data, context),
} satisfies JobDescriptor<typeof recoverKind.schema>;
