import { metricsRegistry } from '../../observability/metrics.js';
import type { JobDescriptor } from '../shared/descriptor.js';
import { relayKind } from './job.js';
import { createRelayDeps, processRelayJob } from './process.js';

/**
 * Relay to Argo CD / Flux: no worker runs without a target. Each target has its own jobs, so one
 * dead agent never delays the others; concurrency bounds how many agents are called at once.
 * Its lock is BullMQ's default, as it always was (a delivery is one short HTTP call).
 */
export const relay = {
  ...relayKind,
  concurrency: 16,
  lock: 'bullmq',
  processor: ({ deps, prefix, relayTargets }) => {
    if (!relayTargets?.length) return undefined;
    const relayDeps = createRelayDeps(deps, relayTargets, { prefix, registry: metricsRegistry });
    return (data, context) => processRelayJob(relayDeps, data, context);
  },
} satisfies JobDescriptor<typeof relayKind.schema>;
