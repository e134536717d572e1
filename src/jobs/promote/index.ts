import { withWritePriority } from '../../adapters/github/write-budget.js';
import type { JobDescriptor } from '../shared/descriptor.js';
import { promoteKind } from './job.js';
import { processPromoteJob, reportPromoteFailure } from './process.js';

/** Plan (or re-plan) the promotion into one environment. */
export const promote = {
  ...promoteKind,
  concurrency: 4,
  fairShare: true,
  lock: 'shared',
  // A promotion someone asked for (a command) writes ahead of routine work.
  processor:
    ({ deps }) =>
    (data, context) =>
      withWritePriority(data.requestedBy ? 'person' : 'routine', () => processPromoteJob(deps, data, context)),
  onFinalFailure:
    ({ deps }) =>
    (data, error) =>
      reportPromoteFailure(deps, data, error),
} satisfies JobDescriptor<typeof promoteKind.schema>;
