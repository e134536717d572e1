import { normalizeName } from '../../planners/image-ref.js';
import { targetKey } from '../../planners/versions.js';
import { acceptsTag, policyFor } from '../../planners/tag-policy.js';
import { scopeRefusal } from '../../events/image-published.js';
import { REFUSED_FOR_SENDER, type ImageJobResult, type ImageTarget } from '../../events/outcome.js';
import { IndexMissingError } from '../../observability/errors.js';
import { enqueueBump, enqueueResync, resyncPending } from '../../queue/enqueue.js';
import type { ImageJob } from './job.js';
import type { ProcessorContext } from '../../queue/worker.js';
import type { JobDeps } from '../shared/deps.js';
import { verifyAnnouncedImage } from './verify-image.js';

/**
 * Fan one published image out to the targets that use it:
 * 1. look up the repositories whose environment files reference the image (one SMEMBERS), and
 *    keep those the event's scope allows: an event from one installation's credential never writes
 *    into another's repositories; each refused repository is logged with the reason. Nothing is
 *    asked of a registry before this: an event no repository in scope uses costs no registry read
 * 1b. per owner of the repositories kept, with that owner's registry credentials (never another
 *    owner's, never the operator's for everyone), check that the tag resolves to the announced
 *    digest; an owner whose registry contradicts the event gets nothing (the reason goes to the
 *    log); when every owner refuses, the job's result is a refusal that says no registry fact
 * 2. for each environment that takes images from the registry and each app using the image,
 *    check the image's tag policy
 * 3. record the image as a candidate for the target and (re)schedule the target's bump job:
 *    a burst of pushes becomes one job, debounced; a push during a running job gets a new one
 */
export async function processImageJob(
  deps: JobDeps,
  data: ImageJob,
  { log }: ProcessorContext,
): Promise<ImageJobResult> {
  const { event, scope } = data;
  const name = normalizeName(event.repository) ?? event.repository;
  const using = await deps.store.subscriptions.reposUsing(name);
  // While a rebuild runs, the index holds the repositories read so far: fanning out to those alone
  // would lose the event for the rest (found by the scale-out test: one repository never got the
  // newest image). The event waits for the rebuild instead.
  const rebuilding = async () =>
    !(await deps.store.subscriptions.isBuilt()) && (using.length === 0 || (await resyncPending(deps.producer)));
  if (await rebuilding()) {
    await enqueueResync(deps.producer, 'index missing');
    throw new IndexMissingError(
      'the subscription index is being rebuilt from GitHub; this image event retries after it',
    );
  }
  if (using.length === 0) {
    log.info({ image: name, tag: event.tag, by: scope.by }, 'No repository uses this image; the event changes nothing');
    return { scheduled: 0, targets: [], nothing: 'no-environment' };
  }
  const inScope = using.filter((key) => {
    const reason = scopeRefusal(scope, key.owner);
    if (reason)
      log.warn(
        { repo: `${key.owner}/${key.repo}`, image: name, tag: event.tag, by: scope.by, reason },
        "Image event not applied to a repository outside its credential's scope",
      );
    return reason === undefined;
  });
  if (inScope.length === 0) {
    log.warn(
      { image: name, tag: event.tag, by: scope.by, owners: scope.owners, refused: using.length },
      'No repository in the scope of the credential uses this image; the event changes nothing',
    );
    // The result is read by the sender (replay, status): the same as for an image no one uses.
    return { scheduled: 0, targets: [], nothing: 'no-environment' };
  }
  // With an owner's credentials for the image, an event its registry contradicts is refused for
  // that owner's repositories before anything is written.
  const contradicted = new Set<string>();
  for (const owner of new Set(inScope.map((key) => key.owner.toLowerCase()))) {
    const reason = await verifyAnnouncedImage(deps.notes?.registry.forOwner(owner), event);
    if (!reason) continue;
    contradicted.add(owner);
    log.warn(
      { image: name, tag: event.tag, digest: event.digest, by: scope.by, owner, reason },
      'Image event refused: the registry does not hold what it announces',
    );
  }
  const repos = inScope.filter((key) => !contradicted.has(key.owner.toLowerCase()));
  if (repos.length === 0) return { refused: REFUSED_FOR_SENDER };
  const scheduled: ImageTarget[] = [];
  let policyRefused = false;
  let configInvalid = false;
  for (const key of repos) {
    const index = await deps.store.subscriptions.loadRepo(key.owner, key.repo);
    if (!index?.config) {
      configInvalid = true;
      continue;
    }
    const policy = policyFor(index.config.images, event.repository);
    const verdict = acceptsTag(policy, event.tag);
    if (!verdict.ok) {
      log.info(
        { repo: `${key.owner}/${key.repo}`, image: name, tag: event.tag, reason: verdict.reason },
        'Tag not taken by the image policy',
      );
      policyRefused = true;
      continue;
    }
    const registryEnvironments = new Set(
      index.config.environments.filter((env) => env.from === 'registry').map((env) => env.name),
    );
    const targets = new Map<string, { environment: string; app: string }>();
    for (const file of index.files) {
      if (registryEnvironments.has(file.environment) && file.images.includes(name))
        targets.set(targetKey(file.environment, file.app), { environment: file.environment, app: file.app });
    }
    for (const target of targets.values()) {
      await deps.store.candidates.addCandidate(key, target.environment, target.app, {
        repository: event.repository,
        tag: event.tag,
        ...(event.digest ? { digest: event.digest } : {}),
        receivedAt: event.receivedAt,
        deliveryId: event.deliveryId,
        ...(event.sourceUrl ? { sourceUrl: event.sourceUrl } : {}),
        ...(event.revision ? { revision: event.revision } : {}),
      });
      await enqueueBump(deps.producer, { ...key, ...target }, event, deps.debounceMs);
      scheduled.push({ owner: key.owner, repo: key.repo, ...target });
    }
  }
  log.info({ image: name, tag: event.tag, targets: scheduled.length }, 'Image fanned out');
  if (scheduled.length > 0) return { scheduled: scheduled.length, targets: scheduled };
  return {
    scheduled: 0,
    targets: [],
    nothing: policyRefused ? 'tag-policy' : configInvalid ? 'config-invalid' : 'no-environment',
  };
}
