import { z } from 'zod';
import { parseImageRef } from '../planners/image-ref.js';
import { isDigest } from './image-published.js';
import type { NormalizeContext, NormalizeResult } from './image-published.js';
import { classifyTag, describeIssues, imageOutcome, invalid, single } from './outcome.js';

/**
 * The CI API (`POST /api/v1/images`): a pipeline says what it pushed, either as one reference
 * `{image: "registry/repo:tag[@digest]"}` or as parts `{repository, tag, digest?}`. Names without
 * a registry are Docker Hub names (`nginx` is `docker.io/library/nginx`). Unlike a registry, a
 * pipeline can be told to fix its request, so a missing or malformed tag is `invalid`, while
 * digest-shaped and signature tags are still ignored like everywhere else.
 */

const ImageBody = z.object({ image: z.string().min(1) });
const PartsBody = z.object({
  repository: z.string().min(1),
  tag: z.string().min(1),
  digest: z.string().min(1).nullish(),
});

const HINT =
  'Send {"image": "registry.example.com/team/app:1.2.3@sha256:<64 hex>"} or {"repository": "registry.example.com/team/app", "tag": "1.2.3", "digest": "sha256:<64 hex>"} (the digest is optional).';

function fromReference(text: string, field: string, ctx: NormalizeContext): NormalizeResult {
  const parsed = parseImageRef(text);
  if (!parsed.ok) return single(invalid(`ci: ${field}: ${parsed.reason}. ${HINT}`));
  const { domain, path, tag, digest } = parsed.ref;
  if (tag === undefined)
    return single(
      invalid(
        `ci: ${field} "${text}" has no tag; Escalator bumps tags, so name the tag that was pushed (…:1.2.3). ${HINT}`,
      ),
    );
  const skip = classifyTag(tag);
  if (skip?.reason === 'invalid-tag') return single(invalid(`ci: ${skip.detail}. ${HINT}`));
  return single(
    imageOutcome(
      { source: 'ci', registry: domain, path, tag, digest, fields: { registry: field, path: field, digest: field } },
      ctx,
    ),
  );
}

/** Normalizes a CI API body: `{image}` or `{repository, tag, digest?}`. */
export function normalizeCiImage(body: unknown, ctx: NormalizeContext): NormalizeResult {
  if (typeof body === 'object' && body !== null && 'image' in body) {
    const parsed = ImageBody.safeParse(body);
    if (!parsed.success) return { kind: 'invalid', message: describeIssues('ci', body, parsed.error, HINT) };
    return fromReference(parsed.data.image, 'image', ctx);
  }
  const parsed = PartsBody.safeParse(body);
  if (!parsed.success) return { kind: 'invalid', message: describeIssues('ci', body, parsed.error, HINT) };
  const { repository, tag, digest } = parsed.data;
  const name = parseImageRef(repository);
  if (!name.ok) return single(invalid(`ci: repository: ${name.reason}. ${HINT}`));
  if (name.ref.tag !== undefined || name.ref.digest !== undefined) {
    return single(
      invalid(
        `ci: repository "${repository}" must be a name only; put the tag in "tag" and the digest in "digest". ${HINT}`,
      ),
    );
  }
  const skip = classifyTag(tag);
  if (skip?.reason === 'invalid-tag') return single(invalid(`ci: ${skip.detail}. ${HINT}`));
  if (skip) return single({ kind: 'ignored', ...skip });
  if (digest && !isDigest(digest))
    return single(
      invalid(`ci: digest "${digest}" is not a valid digest; expected sha256:<64 lowercase hex characters>. ${HINT}`),
    );
  const { domain, path } = name.ref;
  return single(
    imageOutcome(
      {
        source: 'ci',
        registry: domain,
        path,
        tag,
        digest,
        fields: { registry: 'repository', path: 'repository', digest: 'digest' },
      },
      ctx,
    ),
  );
}
