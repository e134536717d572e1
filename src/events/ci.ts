import { z } from 'zod';
import { parseImageRef } from '../planners/image-ref.js';
import { isSourceUrl, REVISION_PATTERN, withOriginOf } from './image-event.js';
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

/** Where the image was built from (optional): shown in pull requests as the source range. */
const Origin = {
  source: z.string().min(1).max(2048).nullish(),
  revision: z.string().min(1).max(64).nullish(),
};
const ImageBody = z.object({ image: z.string().min(1), ...Origin });
const PartsBody = z.object({
  repository: z.string().min(1),
  tag: z.string().min(1),
  digest: z.string().min(1).nullish(),
  ...Origin,
});

const HINT =
  'Send {"image": "registry.example.com/team/app:1.2.3@sha256:<64 hex>"} or {"repository": "registry.example.com/team/app", "tag": "1.2.3", "digest": "sha256:<64 hex>"} (the digest is optional).';

/** Said of a malformed `source` or `revision`: what they are for. */
const ORIGIN_HINT =
  '"source" and "revision" are optional: the repository and the commit the image was built from, shown in pull requests as the changes between versions.';

/**
 * Adds `source` and `revision` to the events of a result, or makes it invalid when they are
 * malformed: a pipeline can fix them, and a pull request must never show a range that was guessed.
 */
function withOrigin(
  result: NormalizeResult,
  origin: { source?: string | null; revision?: string | null },
): NormalizeResult {
  if (result.kind !== 'images') return result;
  const { source, revision } = origin;
  if (source && !isSourceUrl(source))
    return invalid(
      `ci: source "${source.slice(0, 80)}" is not a repository URL; send it as https://github.com/<owner>/<repo>. ${ORIGIN_HINT}`,
    );
  if (revision && !REVISION_PATTERN.test(revision))
    return invalid(
      `ci: revision "${revision}" is not a commit SHA; send the full lowercase SHA (GITHUB_SHA in GitHub Actions). ${ORIGIN_HINT}`,
    );
  return {
    ...result,
    events: withOriginOf(result.events, { source: source ?? undefined, revision: revision ?? undefined }),
  };
}

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
    return withOrigin(fromReference(parsed.data.image, 'image', ctx), parsed.data);
  }
  const parsed = PartsBody.safeParse(body);
  if (!parsed.success) return { kind: 'invalid', message: describeIssues('ci', body, parsed.error, HINT) };
  const { repository, tag, digest } = parsed.data;
  return withOrigin(normalizeParts(repository, tag, digest, ctx), parsed.data);
}

function normalizeParts(
  repository: string,
  tag: string,
  digest: string | null | undefined,
  ctx: NormalizeContext,
): NormalizeResult {
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
