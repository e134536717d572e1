import type { RelayTarget } from '../config/relay-targets.js';
import { enqueueRelay } from '../queue/relay-schedule.js';
import type { Producer } from '../queue/producer.js';
import type { VerifiedDelivery } from './github-webhook-route.js';

/** GitHub lists at most 20 commits in a push payload; with more, the changed paths are unknown. */
const payloadCommitLimit = 20;

interface PushLike {
  installation?: { id: number };
  repository?: { full_name: string };
  before?: string;
  after?: string;
  commits?: Array<{ added?: string[]; modified?: string[]; removed?: string[] }>;
  size?: number;
  distinct_size?: number;
}

/**
 * Hand a verified push (or pull request event, for Argo CD ApplicationSet generators) to the
 * relay with its exact bytes. Runs before the delivery is answered, so a Redis outage makes
 * GitHub record a failure that can be redelivered instead of a refresh silently lost.
 */
export async function relayDelivery(
  producer: Producer,
  targets: RelayTarget[],
  delivery: VerifiedDelivery,
  now: () => Date = () => new Date(),
): Promise<void> {
  if (delivery.name !== 'push' && delivery.name !== 'pull_request') return;
  const payload = delivery.payload as PushLike;
  if (!payload.repository) return;
  const commits = payload.commits ?? [];
  const truncated =
    delivery.name === 'push' &&
    (commits.length >= payloadCommitLimit || (payload.size ?? commits.length) > commits.length);
  // Pull request events carry no path list; null lets every repository-matching target take them.
  const changedPaths =
    delivery.name === 'push' && !truncated
      ? [...new Set(commits.flatMap((c) => [...(c.added ?? []), ...(c.modified ?? []), ...(c.removed ?? [])]))]
      : null;
  await enqueueRelay(
    producer,
    {
      deliveryId: delivery.id,
      event: delivery.name,
      body: delivery.body,
      repository: payload.repository.full_name,
      changedPaths,
      ...(payload.installation ? { installationId: payload.installation.id } : {}),
      ...(payload.before ? { before: payload.before } : {}),
      ...(payload.after ? { after: payload.after } : {}),
    },
    targets,
    now,
  );
}
