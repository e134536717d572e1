/**
 * Deciding the new values of one site. Digest policy: a digest is written where the file already
 * pins one (replaced); a pinned file and an event without a digest is refused; with `pinDigest`
 * a digest is added (Kustomize: a `digest:` key; strings and Helm tags: `tag@digest`).
 * Flux setter markers must agree with what is written under them.
 */
import { isMap, isScalar, type Pair, type Scalar } from 'yaml';
import { isDigest, isValidTag } from '../image-ref.js';
import { isPlainSafe, renderScalar, doubleQuote, singleQuote, type ScalarStyle } from './scalar.js';
import {
  pairOf,
  type EmbeddedIn,
  type Field,
  type MarkerRole,
  type PathSegment,
  type Site,
  type SplitSite,
  type StringSite,
} from './site.js';
import { firstEol, lineEndOf, lineStartOf } from '../text.js';
import type { ImageEvent } from './types.js';

/** One planned text change and the value it is meant to produce. */
export interface Edit {
  docIndex: number;
  start: number;
  end: number;
  /** The new source text for `[start, end)`. */
  text: string;
  /** Path of the value (for reports and verification). */
  path: PathSegment[];
  from: string;
  to: string;
  /** For insertions: offset of the new key inside `text`, to report its line. */
  keyOffset?: number;
  /** Set when the value sits inside a YAML string: `path` goes on inside the string at `embedded.path`. */
  embedded?: EmbeddedIn;
}

/** What one site needs. */
export interface SitePlan {
  edits: Edit[];
  refusals: Array<{ reason: string; at?: number }>;
}

interface PlanContext {
  text: string;
  event: ImageEvent;
  pinDigest: boolean;
  /** What to say when the digest is missing: `pins a digest but ${noDigest}`. */
  noDigest: string;
  describe: (docIndex: number, path: readonly PathSegment[]) => string;
}

const ROLE_WORDS: Record<MarkerRole, string> = {
  full: 'the full image reference',
  tag: 'only the tag',
  name: 'only the image name',
  digest: 'only the digest',
  unknown: 'something Escalator does not understand',
};

function refuseMarker(field: Field, expected: MarkerRole, where: string): { reason: string; at: number } | undefined {
  const marker = field.marker;
  if (!marker || marker.role === expected) return undefined;
  return {
    reason: `the Flux marker ${marker.text} on ${where} says it holds ${ROLE_WORDS[marker.role]}, but that value holds ${ROLE_WORDS[expected]}; fix the marker or the value`,
    at: field.start,
  };
}

function replace(site: Site, field: Field, to: string, context: PlanContext): Edit | { reason: string; at: number } {
  const where = context.describe(site.docIndex, field.path);
  if (field.blocked) return { reason: `cannot edit ${where}: ${field.blocked}`, at: field.start };
  if (field.style === 'block') return { reason: `cannot edit ${where}: it is a block scalar`, at: field.start };
  let text = renderScalar(to, field.style);
  if (field.start === field.end) {
    // An empty value (`newTag:`): the value goes after the key, separated by one space, and
    // before a comment that may follow on the line.
    const before = context.text.charAt(field.start - 1);
    const after = context.text.charAt(field.start);
    text = `${before === ' ' || before === '\t' ? '' : ' '}${text}${after === '#' ? ' ' : ''}`;
  }
  const edit: Edit = {
    docIndex: site.docIndex,
    start: field.start,
    end: field.end,
    text,
    path: field.path,
    from: field.value ?? '',
    to,
  };
  if (site.embedded) edit.embedded = site.embedded;
  return edit;
}

function planString(site: StringSite, context: PlanContext): SitePlan {
  const { event, pinDigest } = context;
  const where = context.describe(site.docIndex, site.field.path);
  const plan: SitePlan = { edits: [], refusals: [] };
  if (site.frozen) return plan;
  if (site.elsewhere) {
    plan.refusals.push({ reason: site.elsewhere, at: site.field.start });
    return plan;
  }
  if (site.placeholder) {
    plan.refusals.push({
      reason: `${where} holds a template placeholder ("${site.field.value}"); render the template or set the value in the file that defines it`,
      at: site.field.start,
    });
    return plan;
  }
  if (site.blocked) {
    plan.refusals.push({ reason: `cannot edit ${where}: ${site.blocked}`, at: site.field.start });
    return plan;
  }
  if (site.malformed) {
    plan.refusals.push({
      reason: `${where} holds "${site.field.value ?? ''}", which is not a valid image reference (${site.malformed}); Escalator does not overwrite a version it cannot read: fix the value first${placeholderHint(site.field.value ?? '')}`,
      at: site.field.start,
    });
    return plan;
  }
  const markerProblem = refuseMarker(site.field, 'full', where);
  if (markerProblem) {
    plan.refusals.push(markerProblem);
    return plan;
  }
  const pinned = site.digest !== undefined;
  if (pinned && !event.digest) {
    plan.refusals.push({
      reason: `${where} pins a digest but ${context.noDigest}`,
      at: site.field.start,
    });
    return plan;
  }
  const digest = pinned || (pinDigest && event.digest) ? event.digest : undefined;
  // A digest-only reference stays digest-only: the digest is what runs.
  const tagPart = site.tag === undefined && pinned ? '' : `:${event.tag}`;
  const to = `${site.prefix}${site.renameTo ?? site.written}${tagPart}${digest ? `@${digest}` : ''}`;
  if (to === site.field.value) return plan;
  const edit = replace(site, site.field, to, context);
  if ('reason' in edit) plan.refusals.push(edit);
  else plan.edits.push(edit);
  return plan;
}

/** The scalar style new values take in an entry: that of the pair they are inserted after. */
function entryStyle(pair: Pair | undefined): ScalarStyle {
  const value = pair?.value;
  if (isScalar(value)) {
    if (value.type === 'QUOTE_DOUBLE') return 'double';
    if (value.type === 'QUOTE_SINGLE') return 'single';
  }
  return 'plain';
}

function renderNew(value: string, style: ScalarStyle): string {
  if (style === 'double') return doubleQuote(value);
  if (style === 'single') return singleQuote(value);
  return isPlainSafe(value) ? value : doubleQuote(value);
}

/**
 * Insertions of new keys (`newTag`, `digest`) into a Kustomize entry: block maps get a new line
 * at the entry's indentation with the line ending of the line above; flow maps get
 * `, key: value` inside the braces.
 */
function insertKeys(
  site: SplitSite,
  keys: Array<[string, string]>,
  context: PlanContext,
): Edit[] | { reason: string; at?: number } {
  const { map, offset, path } = site.entry;
  const text = context.text;
  const pairs = map.items;
  // A digest alone goes right after the existing tag key; a new tag (and digest) after the
  // entry's last key.
  const tagPair = keys[0]?.[0] === site.tagKey ? undefined : pairOf(map, site.tagKey);
  const after = tagPair ?? pairs[pairs.length - 1];
  const afterValue = after?.value as Scalar | undefined;
  const afterKey = after?.key as Scalar | undefined;
  const valueEnd = afterValue?.range?.[1] ?? afterKey?.range?.[1];
  const firstKey = pairs[0]?.key as Scalar | undefined;
  if (site.embedded)
    return {
      reason: `cannot add ${keys.map(([key]) => key).join(' and ')} to ${context.describe(site.docIndex, path)}: it sits inside the string ${site.embedded.path.join('.')}, where Escalator only replaces values; add the key by hand once`,
    };
  if (valueEnd === undefined || !firstKey?.range || !isMap(map)) {
    return {
      reason: `cannot add ${keys.map(([key]) => key).join(' and ')} to ${context.describe(site.docIndex, path)}: the entry has no place to put it; add the key by hand once`,
    };
  }
  const style = entryStyle(after);
  const edits: Edit[] = [];
  if (map.flow) {
    const at = valueEnd + offset;
    for (const [key, value] of keys) {
      const piece = `, ${key}: ${renderNew(value, style)}`;
      edits.push({
        docIndex: site.docIndex,
        start: at,
        end: at,
        text: piece,
        path: [...path, key],
        from: '',
        to: value,
        keyOffset: 2,
      });
    }
    return edits;
  }
  const keyStart = firstKey.range[0] + offset;
  const indent = ' '.repeat(keyStart - lineStartOf(text, keyStart));
  const line = lineEndOf(text, valueEnd + offset);
  const atEnd = line.eol === '';
  const at = atEnd ? text.length : line.end + line.eol.length;
  const eol = atEnd ? firstEol(text) : line.eol;
  for (const [key, value] of keys) {
    const piece = `${indent}${key}: ${renderNew(value, style)}`;
    edits.push({
      docIndex: site.docIndex,
      start: at,
      end: at,
      text: atEnd ? `${eol}${piece}` : `${piece}${eol}`,
      path: [...path, key],
      from: '',
      to: value,
      keyOffset: atEnd ? eol.length : 0,
    });
  }
  return edits;
}

function planSplit(site: SplitSite, context: PlanContext): SitePlan {
  const { event, pinDigest } = context;
  const plan: SitePlan = { edits: [], refusals: [] };
  const entryWhere = context.describe(site.docIndex, site.entry.path) || 'the top level';
  if (site.frozen) return plan;
  const tagField = site.tag;
  const tagWhere = context.describe(site.docIndex, [...site.entry.path, site.tagKey]);
  const tagValue = tagField?.value;
  // Where the version that renders comes from: the tag field (written even when empty: Helm
  // renders the chart's appVersion for `tag: ""`, so the environment does not run the pushed
  // version until it is set), the digest alone (a digest-only pin stays digest-only), or nowhere
  // in this map (`elsewhere`: refused with its line, never "current").
  const tagEmpty = tagField === undefined || tagValue === null || tagValue === '';
  const entryAt = site.tag?.start ?? site.digest?.start ?? site.entry.offset + (site.entry.map.range?.[0] ?? 0);
  if (site.elsewhere) {
    plan.refusals.push({ reason: site.elsewhere, at: entryAt });
    return plan;
  }
  const mixed = mixedPolicies(site, context);
  if (mixed) {
    plan.refusals.push(mixed);
    return plan;
  }
  if (site.placeholder) {
    plan.refusals.push({
      reason: `${entryWhere} holds a template placeholder; render the template or set the value in the file that defines it`,
      ...(entryAt !== undefined ? { at: entryAt } : {}),
    });
    return plan;
  }
  if (site.blocked) {
    plan.refusals.push({
      reason: `cannot edit ${entryWhere}: ${site.blocked}`,
      ...(entryAt !== undefined ? { at: entryAt } : {}),
    });
    return plan;
  }
  const currentTagText = tagValue ?? '';
  const malformed = malformedSplit(site, context);
  if (malformed) {
    plan.refusals.push(malformed);
    return plan;
  }
  if (tagField && isDigest(currentTagText)) {
    plan.refusals.push({
      reason: `${tagWhere} holds a digest ("${currentTagText}"), not a tag; move it to ${site.flavor === 'kustomize' ? "the entry's digest: key" : 'a digest field'} and put the tag in ${site.tagKey}`,
      at: tagField.start,
    });
    return plan;
  }
  const at = currentTagText.indexOf('@');
  const tagDigest = tagField && at >= 0 ? currentTagText.slice(at + 1) : undefined;
  const digestValue = site.digest?.value;
  const digestPinned = typeof digestValue === 'string' && digestValue !== '';
  const pinned = tagDigest !== undefined || digestPinned;
  if (pinned && !event.digest) {
    plan.refusals.push({
      reason: `${entryWhere} pins a digest but ${context.noDigest}`,
      ...(entryAt !== undefined ? { at: entryAt } : {}),
    });
    return plan;
  }
  const addPin = !pinned && pinDigest && event.digest !== undefined;
  const digestField = site.digest;
  // Kustomize renders an entry with a digest and no newTag as `name@digest`: a digest-only
  // reference stays digest-only, as strings do, so no newTag is added to it.
  const digestOnly = (digestPinned && tagEmpty) || (site.flavor === 'flux' && tagEmpty);
  let newTagText = event.tag;
  if (tagDigest !== undefined) newTagText = `${event.tag}@${event.digest}`;
  // Helm without a digest key: charts render `repository:tag`, so the pin travels in the tag.
  else if (addPin && digestField === undefined && site.flavor !== 'kustomize')
    newTagText = `${event.tag}@${event.digest}`;
  if (tagField) {
    const problem =
      refuseMarker(tagField, 'tag', tagWhere) ??
      (tagField.marker?.role === 'tag' && newTagText.includes('@')
        ? {
            reason: `the Flux marker ${tagField.marker.text} on ${tagWhere} says it holds only the tag, but the digest would have to go there too (tag@digest); add a digest field for the pin`,
            at: tagField.start,
          }
        : undefined);
    if (problem) {
      plan.refusals.push(problem);
      return plan;
    }
  }
  const inserts: Array<[string, string]> = [];
  if (digestOnly) {
    // nothing to write for the tag
  } else if (tagField) {
    // A plain `1.10` is the float 1.1 to Helm and Argo CD, and kustomize v5 refuses to build a
    // kustomization whose newTag is a number ("cannot unmarshal number into … newTag of type
    // string"): such a value is not current even when its text matches, so it is rewritten quoted.
    const readsAsString = tagField.style !== 'plain' || isPlainSafe(currentTagText);
    if (newTagText !== currentTagText || !readsAsString) {
      const edit = replace(site, tagField, newTagText, context);
      if ('reason' in edit) plan.refusals.push(edit);
      else plan.edits.push(edit);
    }
  } else {
    inserts.push([site.tagKey, newTagText]);
  }
  if (digestField && (digestPinned || addPin)) {
    const problem = refuseMarker(digestField, 'digest', context.describe(site.docIndex, digestField.path));
    if (problem) {
      plan.refusals.push(problem);
      return plan;
    }
    const newDigest = event.digest ?? '';
    if (newDigest !== digestValue) {
      const edit = replace(site, digestField, newDigest, context);
      if ('reason' in edit) plan.refusals.push(edit);
      else plan.edits.push(edit);
    }
  } else if (addPin && site.flavor === 'kustomize' && digestField === undefined) {
    inserts.push(['digest', event.digest ?? '']);
  }
  const rename = planRename(site, context);
  if (rename && 'reason' in rename) plan.refusals.push(rename);
  else if (rename) plan.edits.push(rename);
  if (inserts.length > 0 && plan.refusals.length === 0) {
    const inserted = insertKeys(site, inserts, context);
    if ('reason' in inserted) plan.refusals.push(inserted);
    else plan.edits.push(...inserted);
  }
  return plan;
}

/**
 * The new repository name of a split site whose Flux policy is configured to set another image
 * than the one it names, written where a `:name` marker of that policy says the name lives (as
 * Flux's setters write it). Without such a field only the version is written, as Flux does.
 */
function planRename(site: SplitSite, context: PlanContext): Edit | { reason: string; at: number } | undefined {
  const field = site.nameField;
  if (site.renameTo === undefined || field?.marker?.role !== 'name') return undefined;
  const policy = (site.tag ?? site.digest)?.marker?.policy;
  if (policy !== undefined && field.marker.policy !== policy) return undefined;
  if (field.value === site.renameTo) return undefined;
  return replace(site, field, site.renameTo, context);
}

/**
 * The fields of one image marked for different Flux policies (`tag` for `flux-system:hello`,
 * `digest` for `flux-system:hello-canary`): each policy's setter writes only its own fields, so
 * writing all of them would write a field for a policy it is not marked for, and writing some
 * would leave the image rendering the other field's version. Refused, with the line of the field
 * of the other policy.
 */
function mixedPolicies(site: SplitSite, context: PlanContext): { reason: string; at: number } | undefined {
  const fields = [site.tag, site.digest, site.nameField].filter((field) => field?.marker !== undefined) as Field[];
  const first = fields[0];
  const other = fields.find((field) => field.marker?.policy !== first?.marker?.policy);
  if (!first?.marker || !other?.marker) return undefined;
  return {
    reason: `${context.describe(site.docIndex, other.path)} is marked for the Flux policy ${other.marker.policy} and ${context.describe(site.docIndex, first.path)} for ${first.marker.policy}, though they set one image; Escalator writes no field for a policy it is not marked for: give the fields of this image one policy`,
    at: other.start,
  };
}

/** `; it looks like a placeholder …` for `{GENERATED_TAG}`-style text, else nothing. */
function placeholderHint(text: string): string {
  return /\{[A-Za-z0-9_.-]*\}/.test(text)
    ? ' (it looks like a placeholder another tool fills in, e.g. `{GENERATED_TAG}`; replace it with a real version once)'
    : '';
}

/**
 * A tag or digest field that is not a valid tag or digest: refused with the reason, so a short or
 * prefix-less digest is never overwritten as if it were a pin, and a placeholder is never skipped.
 */
function malformedSplit(site: SplitSite, context: PlanContext): { reason: string; at: number } | undefined {
  const tagField = site.tag;
  const tagText = tagField?.value ?? '';
  if (tagField && tagText !== '' && !isDigest(tagText)) {
    const at = tagText.indexOf('@');
    const tag = at >= 0 ? tagText.slice(0, at) : tagText;
    const digest = at >= 0 ? tagText.slice(at + 1) : undefined;
    const where = context.describe(site.docIndex, tagField.path);
    if (!isValidTag(tag) || (digest !== undefined && !isDigest(digest)))
      return {
        reason: `${where} holds "${tagText}", which is not a valid ${!isValidTag(tag) ? 'tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127})' : 'tag@digest (the digest is algorithm:hex, e.g. sha256:<64 hex>)'}; Escalator does not overwrite a version it cannot read: fix the value first${placeholderHint(tagText)}`,
        at: tagField.start,
      };
  }
  const digestField = site.digest;
  const digestText = digestField?.value ?? '';
  if (digestField && digestText !== '' && !isDigest(digestText))
    return {
      reason: `${context.describe(site.docIndex, digestField.path)} holds "${digestText}", which is not a digest (algorithm:hex, e.g. sha256:<64 hex>); Escalator does not overwrite it as if it were a pin: fix or remove it first`,
      at: digestField.start,
    };
  return undefined;
}

/** The edits (or refusals) for one site that names the event's image. */
export function planSite(site: Site, context: PlanContext): SitePlan {
  return site.form === 'string' ? planString(site, context) : planSplit(site, context);
}
