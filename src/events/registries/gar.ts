import { z } from 'zod';
import type { NormalizeContext, SourceResult } from '../image-event.js';
import { describeIssues, hostOf, ignore, imageOutcome, invalid, single } from '../outcome.js';
import { JSON_CONTENT_TYPES, type RegistryDescriptor } from './descriptor.js';

/**
 * Google Artifact Registry notifications: messages on the `gcr` Pub/Sub topic, delivered by a
 * push subscription. The body is the push envelope `{message: {data, messageId, publishTime},
 * subscription}` whose `data` is base64 JSON `{action, digest?, tag?}`; with payload unwrapping
 * enabled the body is that JSON itself. `digest` and `tag` are full references
 * (`host/project/repo/image@sha256:…`, `host/project/repo/image:tag`). Verifying the push's OIDC
 * token is the route's job, not this function's.
 */

const Envelope = z.object({
  message: z.object({ data: z.string().min(1), messageId: z.string().nullish() }),
  subscription: z.string().nullish(),
});

const Message = z.object({
  action: z.string(),
  digest: z.string().nullish(),
  tag: z.string().nullish(),
});

const HINT =
  'Send the Pub/Sub push request for the Artifact Registry `gcr` topic unchanged (or its unwrapped message data).';
const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

/** `name` and the part after `@` or the last `:` of a full reference. */
function splitRef(ref: string, separator: '@' | ':'): { name: string; rest: string } | undefined {
  const at = separator === '@' ? ref.indexOf('@') : ref.lastIndexOf(':');
  if (at <= 0 || (separator === ':' && ref.indexOf('/', at) >= 0)) return undefined;
  return { name: ref.slice(0, at), rest: ref.slice(at + 1) };
}

function decodeData(data: string): unknown {
  if (data.length % 4 !== 0 || !BASE64.test(data)) return undefined;
  try {
    return JSON.parse(Buffer.from(data, 'base64').toString('utf8')) as unknown;
  } catch {
    return undefined;
  }
}

/** Normalizes a Google Artifact Registry Pub/Sub push body (wrapped or unwrapped). */
export function normalizeGar(payload: unknown, ctx: NormalizeContext): SourceResult<'gar'> {
  let message: unknown = payload;
  let prefix = '';
  if (typeof payload === 'object' && payload !== null && 'message' in payload) {
    const envelope = Envelope.safeParse(payload);
    if (!envelope.success) return { kind: 'invalid', message: describeIssues('gar', payload, envelope.error, HINT) };
    message = decodeData(envelope.data.message.data);
    if (message === undefined) {
      return single(invalid(`gar: message.data is not base64-encoded JSON. ${HINT}`));
    }
    prefix = 'message.data.';
  }
  const parsed = Message.safeParse(message);
  if (!parsed.success) {
    return {
      kind: 'invalid',
      message: describeIssues('gar', message, parsed.error, HINT).replace(/^gar: /, `gar: ${prefix}`),
    };
  }
  const { action, digest, tag } = parsed.data;
  if (action === 'DELETE') return single(ignore('delete', `action "${action}" for ${tag ?? digest ?? 'an image'}`));
  if (action !== 'INSERT') return single(ignore('not-a-push', `action "${action}"`));
  if (tag === undefined || tag === null || tag === '')
    return single(ignore('untagged', `INSERT of ${digest ?? 'an image'} without a tag`));
  let pinned: { name: string; rest: string } | undefined;
  if (digest !== undefined && digest !== null && digest !== '') {
    pinned = splitRef(digest, '@');
    if (!pinned)
      return single(
        invalid(
          `gar: ${prefix}digest "${digest}" is not a full image reference; expected host/project/repository/image@sha256:<hex>`,
        ),
      );
  }
  // The documented tag is a full reference; tolerate a bare tag when the digest names the image.
  const bare = !tag.includes('/') && !tag.includes(':');
  const tagged = bare && pinned ? { name: pinned.name, rest: tag } : splitRef(tag, ':');
  if (!tagged)
    return single(
      invalid(`gar: ${prefix}tag "${tag}" is not a full image reference; expected host/project/repository/image:tag`),
    );
  let digestValue: string | undefined;
  if (pinned) {
    if (pinned.name !== tagged.name) {
      return single(
        invalid(
          `gar: ${prefix}digest names "${pinned.name}" but ${prefix}tag names "${tagged.name}"; both must name the same image`,
        ),
      );
    }
    digestValue = pinned.rest;
  }
  const host = hostOf(tagged.name);
  return single(
    imageOutcome(
      {
        source: 'gar',
        registry: host,
        path: host === undefined ? tagged.name : tagged.name.slice(host.length + 1),
        tag: tagged.rest,
        digest: digestValue,
        fields: { registry: `${prefix}tag`, path: `${prefix}tag`, digest: `${prefix}digest` },
      },
      ctx,
    ),
  );
}

/** Google Artifact Registry through a Pub/Sub push subscription, which signs each push with a Google OIDC token. */
export const gar = {
  source: 'gar',
  auth: 'google-oidc',
  contentTypes: JSON_CONTENT_TYPES,
  normalize: normalizeGar,
  docs: {
    name: 'Google Artifact Registry',
    section: 'Google Artifact Registry (Pub/Sub push)',
    route: '`POST /registry/gar` (Pub/Sub push)',
    digest: true,
  },
} as const satisfies RegistryDescriptor;
