import type { JobDescriptor } from '../shared/descriptor.js';
import { dashboardKind } from './job.js';
import { processDashboardJob } from './process.js';

/** The dashboard issue (docs/controls.md), its health column read from the agents' reports. */
export const dashboard = {
  ...dashboardKind,
  concurrency: 2,
  lock: 'shared',
  processor:
    ({ deps }) =>
    (data, context) =>
      processDashboardJob(
        { ...deps, loadHealth: (key, environment, app) => deps.store.health.load(key, environment, app) },
        data,
        context,
      ),
} satisfies JobDescriptor<typeof dashboardKind.schema>;
