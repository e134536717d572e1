import { z } from 'zod';
import { isDigest, isRepositoryPath, TAG_PATTERN } from '../planners/image-ref.js';

/**
 * An image event and what a normalizer returns, generic in the source's name. The registry
 * table's normalizers (`./registries/`) are written against this module; `./image-published.ts`
 * builds the event schema and types for every source of that table (`Source`) on top of it. So
 * the table depends on this module and `image-published.ts` on the table, and no import, not even
 * a type-only one, goes round in a cycle.
 */

/** distribution/reference domain as events carry it: lowercase host name or bracketed IPv6, optional port. */
const DOMAIN_PATTERN =
  /^(?:(?:[a-z0-9]|[a-z0-9][a-z0-9-]*[a-z0-9])(?:\.(?:[a-z0-9]|[a-z0-9][a-z0-9-]*[a-z0-9]))*|\[[a-f0-9:]+\])(?::[0-9]+)?$/;

/** A repository URL as image labels and the CI API give it (`https://github.com/o/r`, `git@github.com:o/r.git`). */
export const SOURCE_URL_PATTERN = /^(?:https?:\/\/|git\+https?:\/\/|ssh:\/\/|git@)[^\s]+$/;
/** A git commit SHA, lowercase (7 to 64 hex characters: abbreviated, SHA-1 or SHA-256). */
export const REVISION_PATTERN = /^[0-9a-f]{7,64}$/;

/** Whether `text` is a repository URL an image may name as its source (at most 2,048 characters). */
export function isSourceUrl(text: string): boolean {
  return text.length <= 2048 && SOURCE_URL_PATTERN.test(text);
}

/** Each event with the repository and commit its image was built from, where they are known. */
export function withOriginOf<E extends object>(
  events: readonly E[],
  origin: { source?: string | undefined; revision?: string | undefined },
): E[] {
  return events.map((event) => ({
    ...event,
    ...(origin.source ? { sourceUrl: origin.source } : {}),
    ...(origin.revision ? { revision: origin.revision } : {}),
  }));
}

/**
 * An image published to a registry, normalized, with `source` checked by `source`.
 *
 * `repository` is the full name including the registry host (`ghcr.io/example/hello`,
 * `docker.io/library/nginx`, `registry.example.com:5000/team/app`), so it can be matched
 * against image references found in GitOps files without knowing which registry sent it.
 */
export function imageEventSchema<S extends z.ZodType<string>>(source: S) {
  return z
    .object({
      /** Registry host with optional port, lowercase; `docker.io` for Docker Hub. */
      registry: z.string().regex(DOMAIN_PATTERN, 'must be a registry host name, lowercase, with an optional port'),
      /** Full repository name: `<registry>/<path>`. */
      repository: z.string().min(1),
      /** The tag that was pushed; never empty, never digest-shaped. */
      tag: z.string().regex(TAG_PATTERN, 'must match the Docker tag grammar [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}'),
      /** Manifest digest the tag points at, when the sender says (`sha256:<64 hex>`). */
      digest: z.string().refine(isDigest, 'must be an OCI digest such as sha256:<64 lowercase hex>').optional(),
      /** The repository the image was built from, when the sender says (CI API `source`): its URL. */
      sourceUrl: z.string().max(2048).regex(SOURCE_URL_PATTERN, 'must be a repository URL').optional(),
      /** The commit the image was built from, when the sender says (CI API `revision`). */
      revision: z
        .string()
        .regex(REVISION_PATTERN, 'must be a commit SHA (7 to 64 lowercase hex characters)')
        .optional(),
      /** Which normalizer produced the event. */
      source,
      /** Delivery id of the request that carried the event (sender's id or one minted at intake). */
      deliveryId: z.string().min(1),
      /** When intake received the request, ISO 8601. */
      receivedAt: z.iso.datetime({ offset: true }),
    })
    .refine(
      (e) => e.repository.startsWith(`${e.registry}/`) && isRepositoryPath(e.repository.slice(e.registry.length + 1)),
      {
        message: 'repository must be "<registry>/<lowercase path>"',
        path: ['repository'],
      },
    );
}

/** Every field of `ImagePublished` but the source's name, which the normalizer sets and the type system checks. */
export const ImageEventFields = imageEventSchema(z.string());

/** An image event from the source `S` (`ImagePublished` is the one of every source). */
export type ImageEvent<S extends string = string> = Omit<z.infer<typeof ImageEventFields>, 'source'> & { source: S };

/** Why a well-formed payload produced no event. Answered with 2xx and counted by reason. */
export type IgnoreReason =
  | 'not-a-push'
  | 'untagged'
  | 'digest-tag'
  | 'signature-or-attestation'
  | 'invalid-tag'
  | 'platform-child'
  | 'not-a-container'
  | 'blob'
  | 'pull'
  | 'delete';

/** One thing a payload announced that is not an image push we act on. */
export interface Ignored {
  reason: IgnoreReason;
  /** Human-readable specifics: which action, tag or media type, for logs. */
  detail: string;
}

/**
 * What a normalizer of the source `S` made of a payload.
 * - `images`: usually one event; a Distribution envelope, a Harbor resource list or a Quay tag
 *   list can hold many. `ignored` lists what else the payload held, for counting.
 * - `ignored`: a valid payload with nothing to do; answer 2xx and count by `reason`.
 * - `invalid`: answer 400 with `message`, which says what is wrong and what to send instead.
 */
export type SourceResult<S extends string = string> =
  | { kind: 'images'; events: ImageEvent<S>[]; ignored?: Ignored[] }
  | ({ kind: 'ignored' } & Ignored)
  | { kind: 'invalid'; message: string };

/** Request facts a payload does not carry; passed in so normalizers stay pure. */
export interface NormalizeContext {
  /** The delivery id (sender's header, or one minted at intake). */
  deliveryId: string;
  /** When intake received the request, ISO 8601. */
  receivedAt: string;
}

/** A pure function from a sender's JSON body to the {@link SourceResult} of the source `S`. */
export type SourceNormalizer<S extends string = string> = (payload: unknown, ctx: NormalizeContext) => SourceResult<S>;
