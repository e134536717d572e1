import { z } from 'zod';
import type { NormalizeContext, SourceResult } from '../image-event.js';
import { combine, describeIssues, hostOf, ignore, imageOutcome, single } from '../outcome.js';
import { JSON_CONTENT_TYPES, type RegistryDescriptor } from './descriptor.js';

/**
 * Quay (quay.io and Red Hat Quay) "Push to Repository" notifications. One notification can
 * announce several tags; each becomes one event. Quay sends no manifest digest.
 * `updated_tags` is a list of tag names in current Quay; early quay.io sent an object of
 * tag → image id, which is accepted too (the image ids are not manifest digests and are dropped).
 */

const Payload = z.object({
  docker_url: z.string().min(1),
  updated_tags: z.union([z.array(z.string()), z.record(z.string(), z.unknown())]),
});

const HINT =
  'Send the body of a Quay "Push to Repository" webhook notification unchanged (it needs docker_url and updated_tags).';

/** Normalizes a Quay repository push notification body. */
export function normalizeQuay(payload: unknown, ctx: NormalizeContext): SourceResult<'quay'> {
  if (typeof payload === 'object' && payload !== null && 'build_id' in payload && !('updated_tags' in payload)) {
    // Build queued/started/succeeded/failed notifications share docker_url but carry build_id.
    return single(ignore('not-a-push', 'a Quay build notification'));
  }
  const parsed = Payload.safeParse(payload);
  if (!parsed.success) return { kind: 'invalid', message: describeIssues('quay', payload, parsed.error, HINT) };
  const { docker_url: dockerUrl, updated_tags: updated } = parsed.data;
  const tags = Array.isArray(updated) ? updated : Object.keys(updated);
  const host = hostOf(dockerUrl);
  const path =
    host === undefined ? dockerUrl : dockerUrl.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '').slice(host.length + 1);
  const outcomes = tags.map((tag) =>
    imageOutcome(
      {
        source: 'quay',
        registry: host,
        path,
        tag,
        fields: { registry: 'docker_url', path: 'docker_url', digest: 'digest' },
      },
      ctx,
    ),
  );
  return combine(outcomes, { reason: 'untagged', detail: 'updated_tags is empty' });
}

/** Quay (quay.io and Red Hat Quay): its notifications cannot carry a header, so the token is in the path. */
export const quay = {
  source: 'quay',
  auth: 'path-token',
  contentTypes: JSON_CONTENT_TYPES,
  normalize: normalizeQuay,
  docs: { name: 'Quay', section: 'Quay (quay.io and Red Hat Quay)', digest: false },
} as const satisfies RegistryDescriptor;
