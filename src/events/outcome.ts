import type { z } from 'zod';
import { canonicalRepository, isDigest, MAX_PATH_LENGTH, TAG_PATTERN } from '../planners/image-ref.js';
import {
  ImageEventFields,
  type ImageEvent,
  type Ignored,
  type IgnoreReason,
  type NormalizeContext,
  type SourceResult,
} from './image-event.js';

/**
 * Building blocks shared by the normalizers: the tag ignore rule, repository names, results
 * out of per-item outcomes, and 400 messages out of zod issues.
 */

/**
 * What a sender learns, when it sends an event again, of a first delivery the registry
 * contradicted: this sentence, never the reason. The reason names the digest a tag points at and
 * whether the tag exists, facts the sender did not send and may not know (one installation could
 * read another's private image through them); it goes to the worker's log only.
 */
export const REFUSED_FOR_SENDER =
  "the registry did not confirm the announced image (the worker's log of that delivery says why)";

/** What one announced item (a tag, a resource, an envelope event) of the source `S` turned into. */
export type Outcome<S extends string = string> =
  { kind: 'image'; event: ImageEvent<S> } | IgnoredOutcome | InvalidOutcome;
type IgnoredOutcome = { kind: 'ignored' } & Ignored;
type InvalidOutcome = { kind: 'invalid'; message: string };

/** cosign signatures, attestations and SBOMs, and OCI referrers-tag-schema fallback tags. */
const SIGNATURE_TAG = /^sha(256|512)-[0-9a-f]{64,128}(\.(sig|att|sbom))?$/;
const DIGEST_SHAPED_TAG = /^(?:[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-f0-9]{32,}|[a-f0-9]{64}|[a-f0-9]{128})$/;

/** An ignored outcome. */
export function ignore(reason: IgnoreReason, detail: string): IgnoredOutcome {
  return { kind: 'ignored', reason, detail };
}

/** An invalid outcome. */
export function invalid(message: string): InvalidOutcome {
  return { kind: 'invalid', message };
}

/**
 * The shared ignore rule for tags: empty, cosign/referrer, digest-shaped, or outside the Docker
 * tag grammar. Returns undefined for a tag worth acting on.
 */
export function classifyTag(tag: string | undefined | null): Ignored | undefined {
  if (tag === undefined || tag === null || tag === '')
    return { reason: 'untagged', detail: 'the push carries no tag (pushed by digest)' };
  if (SIGNATURE_TAG.test(tag))
    return {
      reason: 'signature-or-attestation',
      detail: `tag "${tag}" is a cosign signature, attestation, SBOM or referrers tag`,
    };
  if (DIGEST_SHAPED_TAG.test(tag)) return { reason: 'digest-tag', detail: `tag "${tag}" is a digest, not a tag` };
  if (!TAG_PATTERN.test(tag)) return { reason: 'invalid-tag', detail: `tag "${tag}" is not a valid Docker tag` };
  return undefined;
}

/** The registry host of `host/path…` text such as Harbor's `resource_url`, or undefined. */
export function hostOf(reference: string): string | undefined {
  const withoutScheme = reference.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const slash = withoutScheme.indexOf('/');
  return slash > 0 ? withoutScheme.slice(0, slash) : undefined;
}

/** Where the fields of one image came from in the payload, so messages can name them. */
export interface FieldNames {
  registry: string;
  path: string;
  digest: string;
}

/** The facts of one announced image, before the shared rules are applied. */
export interface ImageFacts<S extends string> {
  source: S;
  registry: string | undefined;
  path: string;
  tag: string | undefined | null;
  digest?: string | undefined | null;
  fields: FieldNames;
}

/**
 * Applies the shared rules to one announced image: tag ignore rule first (an untagged child may
 * carry odd data we must not reject), then registry, repository path and digest validation.
 */
export function imageOutcome<S extends string>(facts: ImageFacts<S>, ctx: NormalizeContext): Outcome<S> {
  const skip = classifyTag(facts.tag);
  if (skip) return { kind: 'ignored', ...skip };
  const tag = facts.tag as string;
  const rawRegistry = facts.registry;
  if (rawRegistry === undefined || rawRegistry === '') {
    return invalid(
      `${facts.source}: ${facts.fields.registry} is missing, so the registry host is unknown; the registry sends it in every notification, so send its payload unchanged (a payload rebuilt by hand or by a proxy must keep ${facts.fields.registry})`,
    );
  }
  // Host names are case-insensitive and payloads spell them as they like; then the image
  // grammar's Docker Hub aliases and implicit `library/`, the same as the editor's and the index's.
  const { domain: registry, remainder: path } = canonicalRepository(
    rawRegistry.toLowerCase(),
    facts.path.replace(/^\/+|\/+$/g, ''),
  );
  const repository = `${registry}/${path}`;
  const digest = facts.digest === null || facts.digest === '' ? undefined : facts.digest;
  const candidate = {
    registry,
    repository,
    tag,
    source: facts.source,
    deliveryId: ctx.deliveryId,
    receivedAt: ctx.receivedAt,
    ...(digest !== undefined ? { digest } : {}),
  };
  const parsed = ImageEventFields.safeParse(candidate);
  if (parsed.success) return { kind: 'image', event: { ...parsed.data, source: facts.source } };
  const issue = parsed.error.issues[0];
  const field = issue?.path[0];
  if (field === 'registry')
    return invalid(
      `${facts.source}: ${facts.fields.registry} "${rawRegistry}" is not a registry host name (expected host[:port], e.g. registry.example.com:5000)`,
    );
  if (field === 'repository') {
    const hint =
      path !== path.toLowerCase()
        ? ' (repository paths are lowercase)'
        : path.length > MAX_PATH_LENGTH
          ? ` (it is longer than ${MAX_PATH_LENGTH} characters)`
          : '';
    return invalid(
      `${facts.source}: ${facts.fields.path} "${facts.path}" is not a valid repository path${hint}; expected lowercase components separated by "/", e.g. team/app`,
    );
  }
  if (field === 'digest' && digest !== undefined && !isDigest(digest)) {
    return invalid(
      `${facts.source}: ${facts.fields.digest} "${digest}" is not a valid digest; expected algorithm:hex such as sha256:<64 lowercase hex characters>`,
    );
  }
  if (field === 'deliveryId' || field === 'receivedAt') {
    return invalid(
      `${facts.source}: intake context ${String(field)} is ${issue?.message ?? 'invalid'}; this is an Escalator bug, not a sender error`,
    );
  }
  return invalid(
    `${facts.source}: ${issue ? `${issue.path.join('.')} ${issue.message}` : 'the image could not be normalized'}`,
  );
}

/**
 * Folds per-item outcomes into one result: any invalid item makes the payload invalid; otherwise
 * the images (with what else was ignored), or, when there are none, the first ignore reason with
 * every item's detail.
 */
export function combine<S extends string>(outcomes: readonly Outcome<S>[], whenEmpty: Ignored): SourceResult<S> {
  const bad = outcomes.find((o) => o.kind === 'invalid');
  if (bad) return { kind: 'invalid', message: bad.message };
  const events: ImageEvent<S>[] = [];
  const ignored: Ignored[] = [];
  const seen = new Set<string>();
  for (const o of outcomes) {
    if (o.kind === 'ignored') ignored.push({ reason: o.reason, detail: o.detail });
    if (o.kind !== 'image') continue;
    // A tag listed twice (Quay, Harbor) or an event repeated in one envelope is one push.
    const identity = `${o.event.repository}\n${o.event.tag}\n${o.event.digest ?? ''}`;
    if (!seen.has(identity)) events.push(o.event);
    seen.add(identity);
  }
  if (events.length > 0) return ignored.length > 0 ? { kind: 'images', events, ignored } : { kind: 'images', events };
  const first = ignored[0];
  if (!first) return { kind: 'ignored', ...whenEmpty };
  if (ignored.length === 1) return { kind: 'ignored', ...first };
  return { kind: 'ignored', reason: first.reason, detail: ignored.map((i) => `${i.reason}: ${i.detail}`).join('; ') };
}

/** Turns a single outcome into a result. */
export function single<S extends string>(outcome: Outcome<S>): SourceResult<S> {
  return combine([outcome], { reason: 'not-a-push', detail: 'nothing to do' });
}

/** `a.b[0].c` for a zod issue path. */
function formatPath(path: readonly PropertyKey[]): string {
  let text = '';
  for (const part of path) text += typeof part === 'number' ? `[${part}]` : `${text === '' ? '' : '.'}${String(part)}`;
  return text === '' ? 'the body' : text;
}

function valueAt(payload: unknown, path: readonly PropertyKey[]): unknown {
  let value: unknown = payload;
  for (const part of path) {
    if (value === null || typeof value !== 'object') return undefined;
    value = (value as Record<PropertyKey, unknown>)[part];
  }
  return value;
}

function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return `"${value.length > 60 ? `${value.slice(0, 60)}…` : value}"`;
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value)}`;
}

/**
 * A 400 message naming every field that is missing or wrong, then what to send instead:
 * `harbor: event_data.resources is missing (expected array). Send …`.
 */
export function describeIssues(source: string, payload: unknown, error: z.ZodError, hint: string): string {
  const problems = error.issues.slice(0, 5).map((issue) => {
    const where = formatPath(issue.path);
    const actual = valueAt(payload, issue.path);
    if (issue.code === 'invalid_type') {
      return actual === undefined
        ? `${where} is missing (expected ${issue.expected})`
        : `${where} must be ${issue.expected}, not ${describeValue(actual)}`;
    }
    if (issue.code === 'invalid_union')
      return actual === undefined
        ? `${where} is missing`
        : `${where} has an unexpected shape (${describeValue(actual)})`;
    if (issue.code === 'invalid_value')
      return `${where} is ${describeValue(actual)}, expected ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}`;
    return `${where}: ${issue.message}`;
  });
  const more = error.issues.length > 5 ? ` (and ${error.issues.length - 5} more)` : '';
  return `${source}: ${problems.join('; ')}${more}. ${hint}`;
}

/** One app of one environment of one repository that an image goes to. */
export interface ImageTarget {
  owner: string;
  repo: string;
  environment: string;
  app: string;
}

/** Why an image changed nothing, in the words of the answer and of the status. */
export type NothingReason = 'no-environment' | 'tag-policy' | 'config-invalid';

/**
 * What an image job decided, kept as its result (src/jobs/image/process.ts): read back by a replay answer
 * and by the status route. It names repositories of the event's scope only. An earlier version
 * stored the number of bumps (a number); both are read.
 */
export type ImageJobResult =
  { scheduled: number; targets: ImageTarget[]; nothing?: NothingReason } | { refused: string };
