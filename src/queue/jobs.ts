import { z } from 'zod';
import { ImagePublished } from '../events/image-published.js';

/**
 * Job data schemas, checked when a job is added and again when it is processed.
 * Job data never holds secrets or tokens: installation ids and refs only.
 */

/** An image was published: find the repositories that use it and plan their bumps. */
export const ImageJob = z.object({ event: ImagePublished });
export type ImageJob = z.infer<typeof ImageJob>;

const RepoRef = { installationId: z.number().int().positive(), owner: z.string().min(1), repo: z.string().min(1) };

/** Bump one image in one (repository, environment, app); coalesced per target, newest wins. */
export const BumpJob = z.object({
  ...RepoRef,
  environment: z.string().min(1),
  app: z.string(),
  image: z.object({ repository: z.string().min(1), tag: z.string().min(1), digest: z.string().optional() }),
  /** The deliveries this bump answers (for the PR body and logs). */
  deliveryIds: z.array(z.string()).max(100),
});
export type BumpJob = z.infer<typeof BumpJob>;

/** Rebuild the subscription index entry of one repository. */
export const IndexJob = z.object({ ...RepoRef, reason: z.enum(['installation', 'push', 'missing', 'resync']) });
export type IndexJob = z.infer<typeof IndexJob>;
