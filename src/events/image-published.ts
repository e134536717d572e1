import { createHash } from 'node:crypto';
import { z } from 'zod';
import { isDigest, TAG_PATTERN } from '../planners/image-ref.js';
import { imageEventSchema, type NormalizeContext, type SourceResult } from './image-event.js';
import { registrySources } from './registries/index.js';

/**
 * The normalized domain event of registry intake: "this tag of this repository now points at
 * this manifest". Every registry's webhook and the CI API are turned into this one shape by the
 * pure normalizers in this folder (`./registries/`, `./ci.ts`); jobs never see a vendor payload.
 */

/** Where an event came from: one registry webhook format each (the table in `./registries/index.ts`), plus the CI API. */
export const Source = z.enum([...registrySources, 'ci']);
/** Where an event came from: one registry webhook format each, plus the CI API. */
export type Source = z.infer<typeof Source>;

// The tag, digest and repository path grammars are the image grammar's (src/planners/image-ref.ts).
export { isDigest, TAG_PATTERN };

/**
 * An image published to a registry, normalized (fields: `./image-event.ts`).
 *
 * `repository` is the full name including the registry host (`ghcr.io/example/hello`,
 * `docker.io/library/nginx`, `registry.example.com:5000/team/app`), so it can be matched
 * against image references found in GitOps files without knowing which registry sent it.
 */
export const ImagePublished = imageEventSchema(Source);
/** An image published to a registry, normalized. */
export type ImagePublished = z.infer<typeof ImagePublished>;

/**
 * Who may be changed by an accepted event: the credential that announced it decides, never the
 * event. Carried in the image job beside the event (never the credential itself).
 * - `owners`: GitHub account logins (compared case-insensitively) whose repositories the event may
 *   bump; `'*'` for the legacy global tokens of a single-organisation setup, and for senders that
 *   are the registry itself (GitHub's signed package events, the operator's Pub/Sub topic).
 */
export const EventScope = z.strictObject({
  /** Which credential announced the event, for logs: a token's configured name, `oidc:<owner/repo>`, `github:registry_package`, `legacy:<variable>`. */
  by: z.string().min(1).max(200),
  owners: z.union([z.literal('*'), z.array(z.string().min(1).max(100)).max(1000)]),
});
/** Who may be changed by an accepted event. */
export type EventScope = z.infer<typeof EventScope>;

/**
 * A deterministic id for what a scope allows, without `:`: two credentials announcing the same
 * push are two jobs, so one cannot swallow the other's (and the repositories only it may change).
 */
export function scopeKey(scope: EventScope): string {
  const owners = scope.owners === '*' ? '*' : [...new Set(scope.owners.map((owner) => owner.toLowerCase()))].sort();
  return createHash('sha256').update(JSON.stringify(owners)).digest('hex').slice(0, 32);
}

/** Why the scope refuses a repository of `owner`, or undefined when it allows it. */
export function scopeRefusal(scope: EventScope, owner: string): string | undefined {
  if (scope.owners === '*') return undefined;
  const lower = owner.toLowerCase();
  if (scope.owners.some((allowed) => allowed.toLowerCase() === lower)) return undefined;
  return `the credential ${scope.by} may announce images for ${scope.owners.length === 0 ? 'no owner' : scope.owners.join(', ')}, not for ${owner}`;
}

export type { IgnoreReason, Ignored, NormalizeContext } from './image-event.js';

/** What a normalizer made of a payload (`./image-event.ts` says what each kind means). */
export type NormalizeResult = SourceResult<Source>;

/** A pure function from a sender's JSON body to a {@link NormalizeResult}. */
export type Normalizer = (payload: unknown, ctx: NormalizeContext) => NormalizeResult;

/**
 * A deterministic id for the event, without `:` (BullMQ job ids may not contain it), so a
 * redelivered webhook maps onto the job it already created.
 *
 * The digest identifies what was pushed. Senders that give no digest (Docker Hub, Quay) can push
 * the same tag again with new content; for those the delivery id is part of the key, so a later
 * push of `latest` is not mistaken for a redelivery of the first.
 */
export function eventKey(e: ImagePublished): string {
  const identity =
    e.digest !== undefined
      ? [e.source, e.repository, e.tag, e.digest]
      : [e.source, e.repository, e.tag, '', e.deliveryId];
  return createHash('sha256').update(JSON.stringify(identity)).digest('hex');
}
