import { z } from 'zod';
import type { NormalizeContext, SourceResult } from '../image-event.js';
import { combine, hostOf, describeIssues, ignore, imageOutcome, invalid } from '../outcome.js';
import type { Outcome } from '../outcome.js';
import type { RegistryDescriptor } from './descriptor.js';

/**
 * CNCF Distribution notifications (`application/vnd.docker.distribution.events.v1+json` from
 * registry 2.x, `…v2+json` from 3.x), also sent by GitLab's container registry and other forks.
 *
 * One envelope holds events that are not necessarily related. Registry 2.8 (Debian's
 * `docker-registry`) sends one event per request, reports blobs as `application/octet-stream`,
 * and sets `target.tag` only on a manifest pushed by tag: pushing a multi-platform image yields
 * the per-platform manifests untagged and then the tagged index, which is the one that counts.
 * Registry 3 adds `target.references` to index events, which lets a child in the same envelope
 * be told apart as `platform-child`.
 *
 * The registry blocks its whole queue behind an endpoint that refuses events, so only a payload
 * that is not an envelope at all, or a tagged manifest push we cannot name, is `invalid`.
 */

const MANIFEST_MEDIA_TYPES = new Set([
  'application/vnd.docker.distribution.manifest.v1+json',
  'application/vnd.docker.distribution.manifest.v1+prettyjws',
  'application/vnd.docker.distribution.manifest.v2+json',
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.oci.artifact.manifest.v1+json',
]);

/**
 * What the registry sends its notifications as: `events.v1+json` (registry 2.x), `events.v2+json`
 * (3.x), and `application/json` (forks and hand-written tests).
 */
const DISTRIBUTION_CONTENT_TYPES = [
  'application/vnd.docker.distribution.events.v1+json',
  'application/vnd.docker.distribution.events.v2+json',
  'application/json',
] as const;

const INDEX_MEDIA_TYPES = new Set([
  'application/vnd.docker.distribution.manifest.list.v2+json',
  'application/vnd.oci.image.index.v1+json',
]);

const Descriptor = z.object({ digest: z.string().nullish() });
const Event = z.object({
  action: z.string(),
  target: z.object({
    mediaType: z.string().nullish(),
    digest: z.string().nullish(),
    repository: z.string().nullish(),
    tag: z.string().nullish(),
    url: z.string().nullish(),
    references: z.array(Descriptor).nullish(),
  }),
  request: z.object({ host: z.string().nullish() }).nullish(),
});
const Envelope = z.object({ events: z.array(Event) });
type Event = z.infer<typeof Event>;

const HINT = 'Send the registry notification envelope ({"events": [...]}) unchanged.';

function isManifest(target: Event['target']): boolean {
  if (target.mediaType && MANIFEST_MEDIA_TYPES.has(target.mediaType)) return true;
  // Registries report media types they do not know as-is; the URL still says what was pushed.
  return typeof target.url === 'string' && target.url.includes('/manifests/');
}

function outcomeOf(
  event: Event,
  i: number,
  children: ReadonlySet<string>,
  ctx: NormalizeContext,
): Outcome<'distribution'> {
  const { action, target } = event;
  if (action === 'pull') return ignore('pull', `pull of ${target.repository ?? 'a repository'}`);
  if (action === 'delete') return ignore('delete', `delete in ${target.repository ?? 'a repository'}`);
  if (action !== 'push') return ignore('not-a-push', `action "${action}"`);
  if (!isManifest(target))
    return ignore('blob', `blob${target.digest ? ` ${target.digest}` : ''} (${target.mediaType ?? 'no media type'})`);
  if (
    (target.tag === undefined || target.tag === null || target.tag === '') &&
    target.digest &&
    children.has(target.digest)
  ) {
    return ignore('platform-child', `manifest ${target.digest} is a platform of an index pushed in the same envelope`);
  }
  const repository = target.repository;
  if (!repository && target.tag) {
    return invalid(`distribution: events[${i}].target.repository is missing for a manifest pushed by tag. ${HINT}`);
  }
  return imageOutcome(
    {
      source: 'distribution',
      registry: event.request?.host || (target.url ? hostOf(target.url) : undefined),
      path: repository ?? '',
      tag: target.tag,
      digest: target.digest,
      fields: {
        registry: `events[${i}].request.host`,
        path: `events[${i}].target.repository`,
        digest: `events[${i}].target.digest`,
      },
    },
    ctx,
  );
}

/** Normalizes a CNCF Distribution (or GitLab container registry) notification envelope. */
export function normalizeDistribution(payload: unknown, ctx: NormalizeContext): SourceResult<'distribution'> {
  const parsed = Envelope.safeParse(payload);
  if (!parsed.success) return { kind: 'invalid', message: describeIssues('distribution', payload, parsed.error, HINT) };
  const children = new Set<string>();
  for (const event of parsed.data.events) {
    const { target } = event;
    if (event.action !== 'push' || !target.tag || !INDEX_MEDIA_TYPES.has(target.mediaType ?? '')) continue;
    for (const ref of target.references ?? []) if (ref.digest) children.add(ref.digest);
  }
  return combine(
    parsed.data.events.map((event, i) => outcomeOf(event, i, children, ctx)),
    { reason: 'not-a-push', detail: 'the envelope holds no events' },
  );
}

/** CNCF Distribution and its forks (GitLab): the endpoint's `headers` carry the token. */
export const distribution = {
  source: 'distribution',
  auth: 'bearer',
  contentTypes: DISTRIBUTION_CONTENT_TYPES,
  normalize: normalizeDistribution,
  docs: {
    name: 'CNCF Distribution, GitLab',
    section: 'CNCF Distribution (`registry`) and self-managed GitLab',
    authentication: '`Authorization: Bearer <token>`',
    digest: true,
  },
} as const satisfies RegistryDescriptor;
