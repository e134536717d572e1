import { z } from 'zod';
import { isDigest, isRepositoryPath, TAG_PATTERN } from '../planners/image-ref.js';

/**
 * The schema of an image event, built for a given `source` schema. `./image-published.ts` builds
 * `ImagePublished` with the source enum, which comes from the registry table; the normalizers of
 * that table check their events with this module's {@link ImageEventFields} (`./outcome.ts`),
 * whose source they set themselves. Two modules, so that neither imports the other in a cycle.
 */

/** distribution/reference domain as events carry it: lowercase host name or bracketed IPv6, optional port. */
const DOMAIN_PATTERN = /^(?:(?:[a-z0-9]|[a-z0-9][a-z0-9-]*[a-z0-9])(?:\.(?:[a-z0-9]|[a-z0-9][a-z0-9-]*[a-z0-9]))*|\[[a-f0-9:]+\])(?::[0-9]+)?$/;

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
      /** Which normalizer produced the event. */
      source,
      /** Delivery id of the request that carried the event (sender's id or one minted at intake). */
      deliveryId: z.string().min(1),
      /** When intake received the request, ISO 8601. */
      receivedAt: z.iso.datetime({ offset: true }),
    })
    .refine((e) => e.repository.startsWith(`${e.registry}/`) && isRepositoryPath(e.repository.slice(e.registry.length + 1)), {
      message: 'repository must be "<registry>/<lowercase path>"',
      path: ['repository'],
    });
}

/** Every field of `ImagePublished` but the source's name, which the normalizer sets and the type system checks. */
export const ImageEventFields = imageEventSchema(z.string());
