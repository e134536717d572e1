import { withWritePriority } from '../../adapters/github/write-budget.js';
import type { JobDescriptor } from '../shared/descriptor.js';
import { commandKind } from './job.js';
import { processCommandJob, reportCommandFailure } from './process.js';

/** A `/escalator …` comment or a ticked dashboard box: a person's command, written ahead of routine work. */
export const command = {
  ...commandKind,
  concurrency: 2,
  lock: 'shared',
  processor:
    ({ deps }) =>
    (data, context) =>
      withWritePriority('person', () => processCommandJob(deps, data, context)),
  onFinalFailure:
    ({ deps }) =>
    (data, error) =>
      reportCommandFailure(deps, data, error),
} satisfies JobDescriptor<typeof commandKind.schema>;
