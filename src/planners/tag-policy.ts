import { RE2JS } from 're2js';
import semver from 'semver';
import { sameRepository } from './image-ref.js';

/**
 * Which pushed tags an image accepts, and how two tags compare. Without an `images:` entry every
 * tag is taken (`newest`: the most recently pushed wins) — the common case needs no config.
 * The configuration (`images[]` in src/config/repo-config.schema.ts) checks its values with the
 * compiler here, so a pattern it accepts is one this module can match.
 */

/** How Escalator picks the next tag of an image among the tags that pass `tags`. */
export const TAG_POLICIES = ['newest', 'semver', 'semver-range', 'lexical', 'numerical'] as const;
/** One of {@link TAG_POLICIES}. */
export type TagPolicyName = (typeof TAG_POLICIES)[number];

/** The part of an image's configuration that decides which tags it takes and how they compare. */
export interface TagPolicy {
  policy: TagPolicyName;
  /** RE2 pattern a tag must match (unanchored). */
  tags?: string | undefined;
  /** Semver range for `semver-range`. */
  range?: string | undefined;
  pinDigest: boolean;
}

const defaultPolicy: TagPolicy = { policy: 'newest', pinDigest: false };

/** The policy of the first image whose name is the same repository, or every tag under `newest`. */
export function policyFor<Image extends TagPolicy & { name: string }>(
  images: readonly Image[],
  repository: string,
): TagPolicy {
  return images.find((image) => sameRepository(image.name, repository)) ?? defaultPolicy;
}

/**
 * Compiles an image's `tags` pattern with RE2 (the pure-JavaScript port `re2js`), the same where
 * the configuration is checked and wherever tags are matched. A tag is pushed by whoever can
 * push to the registry, so matching must take time linear in the tag whatever the pattern:
 * JavaScript's backtracking engine takes seconds on `^(a|a)+$` against 29 characters, and
 * doubles with each one more. RE2 has no backreferences and no lookaround, which is what makes it
 * linear; such patterns are refused. Throws `RE2JSSyntaxException` (with `error` and the
 * offending `input`) for an invalid pattern.
 */
export function compileTagPattern(text: string): RE2JS {
  return RE2JS.compile(text);
}

/** Parse a tag as a semantic version, allowing a leading `v` (`v1.2.3`). */
function version(tag: string): semver.SemVer | null {
  return semver.parse(tag.replace(/^v(?=\d)/, ''));
}

/**
 * Compiled `tags` patterns, so a burst of pushes or a bump over many candidate tags compiles each
 * pattern once. Bounded: the oldest entry goes when it is full. `null` for a pattern RE2 refuses,
 * which only a configuration indexed before patterns were RE2 can still hold.
 */
const compiled = new Map<string, RE2JS | null>();
const MAX_COMPILED = 256;

function tagPattern(text: string): RE2JS | null {
  let pattern = compiled.get(text);
  if (pattern === undefined) {
    try {
      pattern = compileTagPattern(text);
    } catch {
      pattern = null;
    }
    if (compiled.size >= MAX_COMPILED) compiled.delete(compiled.keys().next().value as string);
    compiled.set(text, pattern);
  }
  return pattern;
}

/**
 * Whether the policy takes this tag at all; the reason when it does not. `tags` is matched with
 * RE2 (unanchored, like `RegExp.test`), in time linear in the tag whatever the pattern.
 */
export function acceptsTag(policy: TagPolicy, tag: string): { ok: true } | { ok: false; reason: string } {
  if (policy.tags !== undefined) {
    const pattern = tagPattern(policy.tags);
    if (pattern === null)
      return {
        ok: false,
        reason: `the tags pattern ${policy.tags} is not an RE2 regular expression; fix it in .github/escalator.yml`,
      };
    if (!pattern.test(tag)) return { ok: false, reason: `tag ${tag} does not match the tags pattern ${policy.tags}` };
  }
  switch (policy.policy) {
    case 'semver':
      return version(tag)
        ? { ok: true }
        : { ok: false, reason: `tag ${tag} is not a semantic version (policy semver)` };
    case 'semver-range': {
      const v = version(tag);
      if (!v) return { ok: false, reason: `tag ${tag} is not a semantic version (policy semver-range)` };
      return semver.satisfies(v, policy.range ?? '*', { includePrerelease: false })
        ? { ok: true }
        : { ok: false, reason: `tag ${tag} is outside the range ${policy.range}` };
    }
    case 'numerical':
      return /^\d+(\.\d+)?$/.test(tag)
        ? { ok: true }
        : { ok: false, reason: `tag ${tag} is not a number (policy numerical)` };
    default:
      return { ok: true };
  }
}

/**
 * Order two accepted tags: > 0 when `a` is newer. `newest` has no order of its own — the later
 * push wins — so it compares by push time, which callers pass in.
 */
export function compareTags(policy: TagPolicy, a: { tag: string; at: string }, b: { tag: string; at: string }): number {
  switch (policy.policy) {
    case 'semver':
    case 'semver-range': {
      const [va, vb] = [version(a.tag), version(b.tag)];
      if (va && vb) return semver.compare(va, vb);
      return va ? 1 : vb ? -1 : 0;
    }
    case 'numerical':
      return Number(a.tag) - Number(b.tag);
    case 'lexical':
      return a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0;
    default:
      return a.at < b.at ? -1 : a.at > b.at ? 1 : 0;
  }
}

/**
 * Whether moving from the tag a file has to `candidate` goes forward. Escalator never moves an
 * environment to an older version unless told to (rollback). Under `newest` any other tag is a move.
 */
export function isUpgrade(policy: TagPolicy, current: string | undefined, candidate: string): boolean {
  if (current === undefined || current === '') return true;
  if (current === candidate) return false;
  switch (policy.policy) {
    case 'semver':
    case 'semver-range': {
      const [vc, vn] = [version(current), version(candidate)];
      return vc && vn ? semver.gt(vn, vc) : true;
    }
    case 'numerical':
      return Number.isFinite(Number(current)) ? Number(candidate) > Number(current) : true;
    case 'lexical':
      return candidate > current;
    default:
      return true;
  }
}
