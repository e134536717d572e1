import { normalizeGithub } from '../../events/index.js';
import { enqueueImage } from '../../queue/enqueue.js';
import { handler } from './event.js';

/**
 * A package published on GitHub's registry (GHCR): its images, as from any registry's own
 * webhook. GitHub signs this delivery and is the registry itself: the push happened, so every
 * repository using the image may take it.
 */
export const packagePublished = handler(['registry_package', 'package'], async ({ id, name, payload, log, intake }) => {
  const result = normalizeGithub(payload, { deliveryId: id, receivedAt: intake.now().toISOString() });
  if (result.kind !== 'images') {
    log.info(
      { outcome: result.kind, reason: result.kind === 'ignored' ? result.reason : result.message },
      'Package event not used',
    );
    return;
  }
  const scope = { by: `github:${name}`, owners: '*' as const };
  for (const event of result.events) {
    const added = await enqueueImage(intake.producer, event, scope);
    if (added.duplicate)
      log.info(
        { image: `${event.repository}:${event.tag}`, ...added.duplicate },
        'Package event already seen: no new work',
      );
  }
});
