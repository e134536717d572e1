import type { RegistryClient } from '../../adapters/registry/client.js';
import type { ImagePublished } from '../../events/image-published.js';

/**
 * Trust but verify: when the owner of the repositories an event would change holds credentials
 * for the image (its `registry` client, from RegistryAccess.forOwner), the announced tag must
 * resolve to the announced digest there before anything is written. Returns why the event is
 * refused (for the worker's log, never for the sender), or undefined when it holds (or cannot be
 * checked: no credentials of that owner for the image). A registry that does not answer fails the
 * job, which retries: an event is never taken unchecked when it can be checked.
 */
export async function verifyAnnouncedImage(
  registry: RegistryClient | undefined,
  event: ImagePublished,
): Promise<string | undefined> {
  if (!registry?.hasCredentials(event.repository)) return undefined;
  const resolved = await registry.resolve(event.repository, event.tag);
  const announced = `${event.repository}:${event.tag}${event.digest ? `@${event.digest}` : ''}`;
  if (!resolved)
    return `the registry ${event.registry} has no tag ${event.tag} of ${event.repository}, so ${announced} was not pushed there`;
  if (!event.digest || resolved.digest === event.digest) return undefined;
  const pushed = await registry.resolve(event.repository, event.digest);
  return pushed
    ? `the tag ${event.tag} of ${event.repository} now points at ${resolved.digest}, not at the announced ${event.digest}: it moved on since, and the newer push is bumped by its own event`
    : `the registry ${event.registry} does not have the announced digest ${event.digest} of ${event.repository} (the tag ${event.tag} points at ${resolved.digest})`;
}
