import type { JobDescriptor } from '../shared/descriptor.js';
import { diffKind } from './job.js';
import { processDiffJob } from './process.js';

/** Render and diff one pull request at one head. */
export const diff = {
  ...diffKind,
  concurrency: 2,
  fairShare: true,
  lock: 'shared',
  processor:
    ({ deps, env }) =>
    (data, context) =>
      processDiffJob(
        {
          ...deps,
          cacheDir: env.ESCALATOR_CACHE_DIR,
          appId: env.APP_ID,
          renderIsolation: env.ESCALATOR_RENDER_ISOLATION,
        },
        data,
        context,
      ),
} satisfies JobDescriptor<typeof diffKind.schema>;
