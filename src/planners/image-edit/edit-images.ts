/**
 * The image editor: finds where a file pins an image and rewrites only those scalars, keeping
 * every other byte (comments, quotes, order, indentation, line endings, BOM, anchors).
 * Pure: text in, text and a report out.
 *
 * 1. validate the event; skip files that cannot mention the image (substring check)
 * 2. parse the documents with source ranges (large streams: only documents that can mention it)
 * 3. read the image sites of each document by its format
 * 4. plan the new values of the sites that name the event's image; refuse what is unsafe
 * 5. splice the new scalars into the text
 * 6. re-parse and prove that only the intended values changed
 */
import { isDigest, isValidTag, normalizeName, normalizedName, parseImageRef, splitReference } from '../image-ref.js';
import { readApplication, readArgoSourceFile } from './argocd.js';
import { documentKind, fileKind, fileKindFromText, kindFromPath, type PathKind } from './detect.js';
import { readFluxMarkers } from './flux.js';
import { isHelmRelease, readHelmRelease } from './flux-resources.js';
import { readHelmValues } from './helm-values.js';
import { readKustomization } from './kustomize.js';
import { readManifest } from './manifest.js';
import { renameFor, renamesAway, type KustomizeRename, type RenderView } from './renders.js';
import { loadFile, type LoadedFile } from './parse.js';
import { planSite, type Edit } from './plan.js';
import { DocumentReader, markersOf, pushAll, type Field, type PathSegment, type Shared, type Site } from './site.js';
import { isPlainStringInYaml12 } from './scalar.js';
import { applySplices } from '../text.js';
import type { EditChange, EditOptions, EditRefusal, EditResult, FileKind, ImageEvent, ImageUse } from './types.js';
import { verifyEdits } from './verify.js';

export type { EditChange, EditOptions, EditRefusal, EditResult, FileKind, ImageEvent, ImageUse } from './types.js';

const IDENTIFIER_KEY = /^[A-Za-z_$][A-Za-z0-9_$-]*$/;

/** `[2].spec.template.spec.containers[0].image`; the document index only in multi-document files. */
export function formatPath(docIndex: number, path: readonly PathSegment[], multiDocument: boolean): string {
  let result = multiDocument ? `[${docIndex}]` : '';
  for (const segment of path) {
    if (typeof segment === 'number') result += `[${segment}]`;
    else if (IDENTIFIER_KEY.test(segment)) result += result === '' ? segment : `.${segment}`;
    else result += `[${JSON.stringify(segment)}]`;
  }
  return result;
}

/** 1-based lines of many offsets in one pass. */
function linesAt(text: string, offsets: readonly number[]): number[] {
  const order = offsets.map((offset, index) => ({ offset, index })).sort((a, b) => a.offset - b.offset);
  const lines = new Array<number>(offsets.length).fill(1);
  let line = 1;
  let newline = text.indexOf('\n');
  for (const { offset, index } of order) {
    while (newline !== -1 && newline < offset) {
      line += 1;
      newline = text.indexOf('\n', newline + 1);
    }
    lines[index] = line;
  }
  return lines;
}

function readSites(loaded: LoadedFile, pathKind: PathKind, text: string): Site[] {
  const sites: Site[] = [];
  for (const segment of loaded.segments) {
    const kind = documentKind(pathKind, segment.doc);
    const reader = new DocumentReader(segment, text, kind);
    switch (kind) {
      case 'kustomize':
        pushAll(sites, readKustomization(reader));
        break;
      case 'argocd-application':
        pushAll(sites, readApplication(reader));
        break;
      case 'argocd-source':
        pushAll(sites, readArgoSourceFile(reader));
        break;
      case 'manifest':
        pushAll(sites, isHelmRelease(segment.doc) ? readHelmRelease(reader) : readManifest(reader));
        break;
      case 'helm-values':
        pushAll(sites, readHelmValues(reader, segment.doc.contents));
        break;
      case 'unknown':
        break;
    }
    // Flux setter markers: marked fields the format readers did not see are sites too.
    if (kind !== 'unknown' && segment.text.includes('$imagepolicy', segment.doc.range[0])) {
      const seen = new Set<number>();
      for (const site of sites) {
        if (site.docIndex !== segment.index) continue;
        if (site.form === 'string') seen.add(site.field.start);
        else for (const field of [site.tag, site.digest]) if (field) seen.add(field.start);
      }
      pushAll(sites, readFluxMarkers(reader, seen));
    }
  }
  return sites;
}

/**
 * Whose image a refusal of the image itself speaks of, and what to fix: only an image event has a
 * sender; a promotion, a rollback or the command line has none, so no message speaks of "the event".
 */
const IMAGE_OF: Record<NonNullable<EditOptions['origin']>, { whose: (field: string) => string; fix: string }> = {
  event: { whose: (field) => `the event's ${field}`, fix: 'fix the sender' },
  'command-line': { whose: (field) => `the ${field} given`, fix: 'give a valid image' },
  promotion: {
    whose: (field) => `the ${field} the source environment runs`,
    fix: "fix that environment's file first",
  },
  rollback: {
    whose: (field) => `the ${field} on record to roll back to`,
    fix: 'roll back by hand',
  },
};

function eventProblems(event: ImageEvent, origin: NonNullable<EditOptions['origin']>): EditRefusal[] {
  const problems: EditRefusal[] = [];
  const { whose, fix } = IMAGE_OF[origin];
  const parsed = parseImageRef(event.repository);
  if (!parsed.ok)
    problems.push({
      reason: `${whose('repository')} "${event.repository}" is not an image name (${parsed.reason}); ${fix}`,
    });
  if (!isValidTag(event.tag)) {
    problems.push({
      reason: `${whose('tag')} "${event.tag}" is not a valid Docker tag ([A-Za-z0-9_][A-Za-z0-9_.-]{0,127}); Escalator writes only valid tags${origin === 'event' ? '' : ` (${fix})`}`,
    });
  }
  if (event.digest !== undefined && !isDigest(event.digest)) {
    problems.push({
      reason: `${whose('digest')} "${event.digest}" is not a valid digest (algorithm:encoded, e.g. sha256:<64 hex>); ${fix}`,
    });
  }
  return problems;
}

function dedupe(refusals: EditRefusal[]): EditRefusal[] {
  const seen = new Set<string>();
  return refusals.filter((refusal) => {
    const key = `${refusal.line ?? ''}\u0000${refusal.reason}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Drops duplicate edits (one field reached twice) and reports overlapping different ones. */
function mergeEdits(edits: Edit[]): { edits: Edit[]; conflict?: Edit } {
  const unique: Edit[] = [];
  const seen = new Map<string, Edit>();
  for (const edit of edits) {
    const key = `${edit.start}:${edit.end}:${edit.text}`;
    if (seen.has(key) && edit.start !== edit.end) continue;
    seen.set(key, edit);
    unique.push(edit);
  }
  const replacements = unique.filter((edit) => edit.start !== edit.end).sort((a, b) => a.start - b.start);
  for (let i = 1; i < replacements.length; i += 1) {
    const previous = replacements[i - 1] as Edit;
    const current = replacements[i] as Edit;
    if (current.start < previous.end) return { edits: unique, conflict: current };
  }
  return { edits: unique };
}

/**
 * Writes the event's tag (and digest, per the digest policy) wherever the file pins the event's
 * image. The file is untouched (byte-identical) when anything is refused or nothing changes.
 */
export function editImages(text: string, event: ImageEvent, options: EditOptions): EditResult {
  const pathKind = kindFromPath(options.path);
  const untouched = (kind: FileKind, mentions: boolean, refused: EditRefusal[]): EditResult => ({
    text,
    kind,
    mentions,
    changed: [],
    unchanged: mentions && refused.length === 0,
    refused: dedupe(refused),
    left: [],
  });
  const problems = eventProblems(event, options.origin ?? 'event');
  const parsedEvent = parseImageRef(event.repository);
  if (!parsedEvent.ok) return untouched(fileKindFromText(pathKind, text), false, problems);
  const eventName = normalizedName(parsedEvent.ref);
  const policies = fluxPolicyImages(options.fluxPolicies);
  const eventPolicies = [...policies].filter(([, image]) => image.name === eventName).map(([policy]) => policy);
  const marked = eventPolicies.some((policy) => text.includes(`"${policy}`));
  const needle = parsedEvent.ref.path.slice(parsedEvent.ref.path.lastIndexOf('/') + 1);
  // Every spelling of a repository ends with its last path component: a file without it cannot
  // mention the image, unless a Flux marker of a policy that sets the image is in it.
  if (pathKind === 'unknown' || (!text.includes(needle) && !marked))
    return untouched(fileKindFromText(pathKind, text), false, problems);

  const loaded = loadFile(text, marked ? undefined : needle);
  const kind =
    loaded.mode === 'whole'
      ? fileKind(
          pathKind,
          loaded.segments.map((segment) => segment.doc),
        )
      : fileKindFromText(pathKind, text);
  if (loaded.refusals.length > 0) return untouched(kind, true, [...problems, ...loaded.refusals]);

  const multiDocument = loaded.count > 1;
  const allSites = readSites(loaded, pathKind, text);
  const describe = (docIndex: number, path: readonly PathSegment[]) => formatPath(docIndex, path, multiDocument);
  const rendered = renderedAs(
    selectSites(allSites, eventName, policies, eventPolicies.length > 0, (site) =>
      options.dottedKeys === true ? unblockDottedKey(site) : site,
    ).filter(
      (site) =>
        site.name === eventName ||
        site.renameTo !== undefined ||
        site.redirect?.from === eventName ||
        (site.name === undefined && site.placeholder && site.raw.includes(needle)),
    ),
    eventName,
    options.views ?? [],
    describe,
  );
  const sites = editSharedAnchorsOnce(rendered.sites);
  const mentions = sites.length > 0 || rendered.refusals.length > 0 || loaded.templates.length > 0;
  if (problems.length > 0) return untouched(kind, mentions, problems);

  const noDigest = noDigestReason(options.origin ?? 'event', event);
  const context = { text, event, pinDigest: options.pinDigest === true, noDigest, describe };
  // Refusals about the whole file (kustomize cannot build it, which entry is meant is a guess)
  // leave it untouched; refusals about one entry leave that entry and let the others be edited.
  const fileRefusals: Array<{ reason: string; at?: number }> = [];
  const entryRefusals: Array<{ reason: string; at?: number }> = [...rendered.refusals];
  if (mentions) {
    const siblings = options.siblings ?? [];
    if (pathKind === 'kustomize' && siblings.length > 0)
      fileRefusals.push({
        reason: `kustomize cannot build this directory: ${options.path} and ${siblings.join(' and ')} are both kustomizations of it ("Found multiple kustomization files under: …"), so neither is edited; keep one and merge the other into it`,
        at: 0,
      });
    pushAll(fileRefusals, ambiguousAliases(sites, context.describe));
    for (const site of allSites) {
      const numeric = site.name !== eventName ? numericNewTag(site) : undefined;
      if (numeric)
        fileRefusals.push({
          reason: `kustomize cannot build this file: ${context.describe(site.docIndex, numeric.path)} is written ${numeric.value ?? ''} without quotes, which YAML reads as a ${numberOrBoolean(numeric.value ?? '')} ("cannot unmarshal … newTag of type string"); quote it ("${numeric.value ?? ''}")`,
          at: numeric.start,
        });
    }
  }
  const planned: Edit[] = [];
  for (const site of sites) {
    const plan = planSite(site, context);
    // A site with any refusal is left whole: none of its edits are kept.
    if (plan.refusals.length > 0) pushAll(entryRefusals, plan.refusals);
    else pushAll(planned, plan.edits);
  }
  const toRefusal = ({ reason, at }: { reason: string; at?: number }): EditRefusal =>
    at === undefined ? { reason } : { reason, line: linesAt(text, [at])[0] ?? 1 };
  const byPlace = (a: { at?: number }, b: { at?: number }) => (a.at ?? -1) - (b.at ?? -1);
  const leftAlone = [...loaded.templates, ...entryRefusals.sort(byPlace).map(toRefusal)];
  if (fileRefusals.length > 0)
    return untouched(kind, mentions, [...fileRefusals.map(toRefusal), ...entryRefusals.map(toRefusal)]);
  const { edits, conflict } = mergeEdits(planned);
  if (conflict) {
    return untouched(kind, mentions, [
      toRefusal({
        reason: `internal error: two edits overlap at ${context.describe(conflict.docIndex, conflict.path)}; the file was left untouched, please report this`,
        at: conflict.start,
      }),
    ]);
  }
  // Nothing to write: the entries left are the file's refusals, and so are template documents
  // when no other document names the image (the image may be set only there).
  if (edits.length === 0)
    return untouched(kind, mentions, entryRefusals.length > 0 || sites.length === 0 ? leftAlone : []);

  const spliced = applySplices(text, edits);
  const problem = verifyEdits(loaded, spliced.text, edits);
  if (problem) {
    return untouched(kind, mentions, [
      {
        reason: `internal error: the edit did not verify (${problem}); the file was left untouched, please report this`,
      },
      ...leftAlone,
    ]);
  }
  const lines = linesAt(
    spliced.text,
    edits.map((edit, i) => (spliced.starts[i] ?? 0) + (edit.keyOffset ?? 0)),
  );
  const changed: EditChange[] = edits
    .map((edit, i) => ({
      path: context.describe(edit.docIndex, edit.path),
      line: lines[i] ?? 1,
      from: edit.from,
      to: edit.to,
      order: edit.start,
    }))
    .sort((a, b) => a.order - b.order || a.line - b.line)
    .map(({ path, line, from, to }) => ({ path, line, from, to }));
  return { text: spliced.text, kind, mentions, changed, unchanged: false, refused: [], left: dedupe(leftAlone) };
}

/** `images[].fluxPolicies` as policy → image (normalized name and the spelling to write). */
function fluxPolicyImages(
  mapping: Readonly<Record<string, string>> | undefined,
): Map<string, { name: string; written: string }> {
  const images = new Map<string, { name: string; written: string }>();
  for (const [policy, image] of Object.entries(mapping ?? {})) {
    const parsed = parseImageRef(image);
    if (parsed.ok) images.set(policy, { name: normalizedName(parsed.ref), written: image });
  }
  return images;
}

/**
 * The sites that may be the event's image, by Flux marker first: a site marked for a policy the
 * configuration maps is the event's site exactly when that policy sets the event's image (named
 * otherwise in the file: renamed to it); one marked for another policy is left alone when some
 * policy is configured for the event's image (the markers then say which fields are its). Every
 * other site is the event's site when it names the event's repository.
 */
function selectSites(
  sites: Site[],
  eventName: string,
  policies: ReadonlyMap<string, { name: string; written: string }>,
  eventIsMarked: boolean,
  adjust: (site: Site) => Site,
): Site[] {
  const selected: Site[] = [];
  for (const site of sites) {
    const policy = markersOf(site)[0]?.policy;
    const mapped = policy === undefined ? undefined : policies.get(policy);
    if (mapped) {
      if (mapped.name !== eventName) continue;
      if (site.name !== eventName) site.renameTo = mapped.written;
    } else if (policy !== undefined && eventIsMarked) continue;
    selected.push(adjust(site));
  }
  return selected;
}

/** A literal dotted-key site (`image.tag`) made editable, when the configuration says the chart reads such keys. */
function unblockDottedKey(site: Site): Site {
  if (site.form === 'split' && site.dotted !== undefined && site.blocked === site.dotted) delete site.blocked;
  return site;
}

/**
 * The sites that render as the event's image. A Helm image map whose release pulls from another
 * registry (`global.imageRegistry`) is refused for the repository it names. A manifest image that a kustomization renames to
 * another repository on every way the file is rendered is not the event's image there; one that
 * is renamed on some ways only, by an entry that leaves the version to the manifest, would carry
 * the new tag to a repository nobody pushed it to, and is refused.
 */
function renderedAs(
  sites: Site[],
  eventName: string,
  views: readonly RenderView[],
  describe: (docIndex: number, path: readonly PathSegment[]) => string,
): { sites: Site[]; refusals: Array<{ reason: string; at: number }> } {
  const kept: Site[] = [];
  const refusals: Array<{ reason: string; at: number }> = [];
  for (const site of sites) {
    if (site.redirect?.from === eventName && site.name !== eventName) {
      const at =
        site.form === 'split'
          ? (site.tag?.start ?? site.entry.offset + (site.entry.map.range?.[0] ?? 0))
          : site.field.start;
      refusals.push({ reason: site.redirect.reason, at });
      continue;
    }
    if (views.length === 0) {
      kept.push(site);
      continue;
    }
    if (site.kind !== 'manifest' || site.form !== 'string') {
      kept.push(site);
      continue;
    }
    const renames = views.map((view) => renameFor(view, site.written));
    const away = renames.filter(
      (rename): rename is KustomizeRename => rename !== undefined && renamesAway(rename, eventName),
    );
    // Every render takes the version from an images: entry (newTag or digest): the text here does
    // not render, so only the entry is written, as kustomize edit set image, Kargo and Renovate do.
    if (renames.every((rename) => rename !== undefined && rename.setsVersion && !renamesAway(rename, eventName)))
      continue;
    if (away.length === 0) {
      kept.push(site);
      continue;
    }
    if (away.length === views.length) continue;
    const leaking = away.find((rename) => !rename.setsVersion);
    if (!leaking) {
      kept.push(site);
      continue;
    }
    refusals.push({
      reason: `${describe(site.docIndex, site.field.path)} renders as ${site.written} in some renders but as ${leaking.newName} through ${leaking.kustomization} (${leaking.entry} renames ${leaking.name} and leaves the version to this file), so a new tag here would be asked from ${leaking.newName}, where it was not pushed; set newTag or digest in that entry, or give the renders separate files`,
      at: site.field.start,
    });
  }
  return { sites: kept, refusals };
}

/** Why the tag or digest field of a split site is not a valid tag or digest, if it is not. */
function splitMalformed(site: Site): string | undefined {
  if (site.form !== 'split') return undefined;
  const tagText = site.tag?.value ?? '';
  const at = tagText.indexOf('@');
  const tag = at >= 0 ? tagText.slice(0, at) : tagText;
  if (tagText !== '' && !isDigest(tagText) && (!isValidTag(tag) || (at >= 0 && !isDigest(tagText.slice(at + 1)))))
    return `"${tagText}" is not a valid tag`;
  const digest = site.digest?.value ?? '';
  if (digest !== '' && !isDigest(digest)) return `"${digest}" is not a valid digest`;
  return undefined;
}

function sharedOf(site: Site): Shared | undefined {
  return site.form === 'string' ? site.field.shared : (site.tag?.shared ?? site.digest?.shared);
}

/**
 * An anchored image map (or list of entries) that aliases repeat: when the anchor is defined
 * once and every alias of it is read as this same image, editing the anchor once is editing every
 * use, so the anchor's site is edited and the uses through aliases are dropped. Anything else (an
 * alias used where no image is read, a merge key, a redefined anchor) stays refused.
 */
function editSharedAnchorsOnce(sites: Site[]): Site[] {
  const groups = new Map<string, { shared: Shared; anchor: Site[]; alias: Site[]; uses: Set<number> }>();
  for (const site of sites) {
    const shared = sharedOf(site);
    if (!shared) continue;
    const key = `${site.docIndex}\u0000${shared.anchor}`;
    const group = groups.get(key) ?? { shared, anchor: [], alias: [], uses: new Set<number>() };
    if (shared.side === 'anchor') group.anchor.push(site);
    else {
      group.alias.push(site);
      group.uses.add(shared.use ?? -1);
    }
    groups.set(key, group);
  }
  const dropped = new Set<Site>();
  for (const { shared, anchor, alias, uses } of groups.values()) {
    if (shared.anchors !== 1 || anchor.length === 0 || uses.size !== shared.aliases) continue;
    const fields = (site: Site): Field[] =>
      site.form === 'string' ? [site.field] : [site.tag, site.digest].filter((field) => field !== undefined);
    if (anchor.some((site) => fields(site).some((field) => field.style === 'block'))) continue;
    for (const site of anchor) {
      if (site.blocked === shared.blocked) delete site.blocked;
      for (const field of fields(site)) if (field.blocked === shared.blocked) delete field.blocked;
    }
    for (const site of alias) dropped.add(site);
  }
  return dropped.size === 0 ? sites : sites.filter((site) => !dropped.has(site));
}

/** The newTag field of a Kustomize entry that YAML 1.2 reads as a number or boolean, which kustomize refuses. */
function numericNewTag(site: Site): Field | undefined {
  if (site.form !== 'split' || site.flavor !== 'kustomize' || site.frozen) return undefined;
  const tag = site.tag;
  if (!tag || tag.style !== 'plain' || tag.value === null || tag.value === '') return undefined;
  return isPlainStringInYaml12(tag.value) ? undefined : tag;
}

function numberOrBoolean(text: string): string {
  return /^(?:true|false|True|False|TRUE|FALSE)$/.test(text)
    ? 'boolean'
    : /^[-+.0-9]/.test(text)
      ? 'number'
      : 'non-string';
}

/** Where a Kustomize `images:` entry sits, or undefined for other sites. */
function kustomizeEntry(site: Site): { path: readonly PathSegment[]; version: string; at: number } | undefined {
  if (site.kind !== 'kustomize' || site.frozen) return undefined;
  if (site.form === 'split') {
    if (site.flavor !== 'kustomize') return undefined;
    const tag = site.tag?.value ?? '';
    return {
      path: site.entry.path,
      version: tag.split('@')[0] ?? '',
      at: site.tag?.start ?? site.digest?.start ?? site.entry.offset + (site.entry.map.range?.[0] ?? 0),
    };
  }
  const first = site.field.path[0];
  if (first !== 'images' && first !== 'imageTags') return undefined;
  return {
    path: site.field.path.slice(0, -1),
    version: site.tag ?? '',
    at: site.field.start,
  };
}

/**
 * Two `images:` entries of one kustomization that name the event's repository (in one spelling
 * or two: `nginx`, `docker.io/library/nginx`) at different tags: which one the event means is a
 * guess, so the file is refused. Entries without a tag (digest-only) and digests are not compared.
 */
function ambiguousAliases(
  sites: readonly Site[],
  describe: (docIndex: number, path: readonly PathSegment[]) => string,
): Array<{ reason: string; at: number }> {
  const byDocument = new Map<number, Array<{ site: Site; entry: NonNullable<ReturnType<typeof kustomizeEntry>> }>>();
  for (const site of sites) {
    const entry = kustomizeEntry(site);
    if (!entry) continue;
    const list = byDocument.get(site.docIndex) ?? [];
    list.push({ site, entry });
    byDocument.set(site.docIndex, list);
  }
  const refusals: Array<{ reason: string; at: number }> = [];
  for (const [docIndex, entries] of byDocument) {
    const tagged = entries.filter(({ entry }) => entry.version !== '');
    if (new Set(tagged.map(({ entry }) => entry.version)).size < 2) continue;
    const listed = tagged
      .map(({ site, entry }) => `${describe(docIndex, entry.path)} (${site.written} at ${entry.version})`)
      .join(', ');
    refusals.push({
      reason: `${listed} name the same repository at different tags; Escalator does not guess which one is meant: make them agree, or remove the one that is not used`,
      at: tagged[0]?.entry.at ?? 0,
    });
  }
  return refusals;
}

/** What a site says the file currently runs. */
function useOf(
  site: Site,
): (Omit<ImageUse, 'path' | 'line' | 'kind'> & { offset: number; at: readonly PathSegment[] }) | undefined {
  if (site.name === undefined) return undefined;
  if (site.form === 'string') {
    const use: Omit<ImageUse, 'path' | 'line' | 'kind'> & { offset: number; at: readonly PathSegment[] } = {
      name: site.name,
      written: site.written,
      offset: site.field.start,
      at: site.field.path,
    };
    if (site.tag !== undefined) use.tag = site.tag;
    if (site.digest !== undefined) use.digest = site.digest;
    return use;
  }
  const tagText = site.tag?.value ?? undefined;
  const at = tagText?.indexOf('@') ?? -1;
  const tag = tagText === undefined || tagText === '' ? undefined : at >= 0 ? tagText.slice(0, at) : tagText;
  const digest = site.digest?.value ? site.digest.value : at >= 0 ? tagText?.slice(at + 1) : undefined;
  const offset = site.tag?.start ?? (site.entry.map.range?.[0] ?? 0) + site.entry.offset;
  const use: Omit<ImageUse, 'path' | 'line' | 'kind'> & { offset: number; at: readonly PathSegment[] } = {
    name: site.name,
    written: site.written,
    offset,
    at: site.tag?.path ?? site.entry.path,
  };
  if (tag !== undefined) use.tag = tag;
  if (digest !== undefined) use.digest = digest;
  return use;
}

/**
 * What a manifest image renders as when every way the file is rendered renames it to one mirror
 * (`name: alpine`, `newName: my.mirror/alpine`): the mirror, at the manifest's version when the
 * entries leave the version to it, or nothing when they set it (the entries are read as uses of
 * their own). Renamed on some renders only, or to different mirrors, it is read as written.
 */
function renderedUse(use: ImageUse, site: Site, views: readonly RenderView[]): ImageUse[] {
  if (views.length === 0 || site.kind !== 'manifest' || site.form !== 'string') return [use];
  const renames = views.map((view) => renameFor(view, site.written));
  // Every render sets the version through an entry: the entries are the uses, not this text.
  if (renames.every((rename) => rename !== undefined && rename.setsVersion && !renamesAway(rename, use.name)))
    return [];
  if (renames.some((rename) => rename === undefined || !renamesAway(rename, use.name))) return [use];
  const targets = new Set(renames.map((rename) => splitReference(rename?.newName ?? '').name));
  if (targets.size !== 1) return [use];
  if (renames.every((rename) => rename?.setsVersion)) return [];
  if (renames.some((rename) => rename?.setsVersion)) return [use];
  const written = [...targets][0] as string;
  const name = normalizeName(written);
  return name === undefined ? [use] : [{ ...use, name, written }];
}

/**
 * The version of what listImages finds in a text. Indexes record it beside the blobs they read;
 * an index written by another version reads every file again. Bump it whenever the same text
 * would yield other images, tags or digests.
 * - 2: `registry-1.docker.io/…` is read as `docker.io/…` (one set of Docker Hub aliases).
 * - 3: a Kustomize newName carrying a version is read as the image; an unquoted numeric newTag and
 *   malformed versions are reported instead of read; name/tag image maps, keys ending in `image`,
 *   `image.name` parameters and Flux-marked fields are read.
 * - 4: the plain documents of a multi-document file that holds Go/Helm template documents are
 *   read (the templates are reported), where the whole file was refused.
 * - 5 (issue 32): a Helm `repository` carrying the version is read as the image at that version;
 *   Helm values inside strings (`helm.values: |`, a ConfigMap's `values.yaml`), Flux
 *   Kustomization `spec.images`, HelmRelease post-renderer images and inline patches are read;
 *   image maps of a values document that sets `global.imageRegistry` are read as that registry's;
 *   with views, a manifest image whose version an `images:` entry sets on every render is no use.
 */
export const IMAGE_READER_VERSION = 5;

/**
 * Every image reference the file uses, for discovering which images an environment runs and
 * for copying versions between environments. Templated values are reported as refusals.
 */
export function listImages(
  text: string,
  options: {
    path: string;
    /**
     * The ways kustomize renders the file (see `kustomizeViews`): a manifest image that every
     * render renames to a mirror is read as the mirror (with the version the renaming entry leaves
     * to it), or left out when the renaming entries set the version themselves (those entries are
     * the uses then).
     */
    views?: readonly RenderView[];
  },
): { uses: ImageUse[]; refused: EditRefusal[] } {
  const pathKind = kindFromPath(options.path);
  if (pathKind === 'unknown') return { uses: [], refused: [] };
  const loaded = loadFile(text);
  if (loaded.refusals.length > 0) return { uses: [], refused: dedupe(loaded.refusals) };
  const templates = loaded.templates;
  const multiDocument = loaded.count > 1;
  const sites = readSites(loaded, pathKind, text);
  const found: Array<{ site: Site; use: NonNullable<ReturnType<typeof useOf>> }> = [];
  const templated: Array<{ site: Site; offset: number; malformed?: string }> = [];
  const unbuildable: Array<{ field: Field; docIndex: number }> = [];
  for (const site of sites) {
    // A Flux-marked tag or digest with no :name beside it names no image until configured.
    if (site.name === undefined && !site.placeholder) continue;
    const use = useOf(site);
    const numeric = numericNewTag(site);
    const malformed = site.malformed ?? splitMalformed(site);
    if (malformed && !site.placeholder)
      templated.push({
        site,
        offset: site.form === 'string' ? site.field.start : (site.digest?.start ?? site.tag?.start ?? use?.offset ?? 0),
        malformed,
      });
    else if (site.placeholder)
      templated.push({ site, offset: use?.offset ?? (site.form === 'string' ? site.field.start : site.entry.offset) });
    else if (numeric) unbuildable.push({ field: numeric, docIndex: site.docIndex });
    else if (use) found.push({ site, use });
  }
  const lines = linesAt(text, [
    ...found.map(({ use }) => use.offset),
    ...templated.map(({ offset }) => offset),
    ...unbuildable.map(({ field }) => field.start),
  ]);
  const uses = found.flatMap(({ site, use }, i): ImageUse[] => {
    const { offset: _offset, at, ...rest } = use;
    const read: ImageUse = {
      ...rest,
      path: formatPath(site.docIndex, at, multiDocument),
      line: lines[i] ?? 1,
      kind: site.kind,
    };
    return renderedUse(read, site, options.views ?? []);
  });
  const refused = templated.map(({ site, malformed }, i): EditRefusal => ({
    reason:
      malformed !== undefined
        ? `${site.written}'s version cannot be read from the file: ${malformed}`
        : `${site.written} is set through a template placeholder; its version cannot be read from the file`,
    line: lines[found.length + i] ?? 1,
  }));
  unbuildable.forEach(({ field, docIndex }, i) =>
    refused.push({
      reason: `${formatPath(docIndex, field.path, multiDocument)} is written ${field.value ?? ''} without quotes, which YAML reads as a ${numberOrBoolean(field.value ?? '')}; kustomize refuses to build the file until it is quoted ("${field.value ?? ''}")`,
      line: lines[found.length + templated.length + i] ?? 1,
    }),
  );
  return { uses, refused: dedupe([...templates, ...refused]) };
}

/** The end of "… pins a digest but …": why there is no digest to write, said for where the version comes from. */
function noDigestReason(origin: NonNullable<EditOptions['origin']>, event: ImageEvent): string {
  switch (origin) {
    case 'command-line':
      return `the image given has none; give it as ${event.repository}:${event.tag}@sha256:… (or remove the pin)`;
    case 'promotion':
      return `the environment it is promoted from runs ${event.tag} without one; pin the digest there first (or remove the pin here)`;
    case 'rollback':
      return `no digest of ${event.tag} is on record to roll back to (this environment ran it by tag); roll back by hand with ${event.repository}:${event.tag}@sha256:… (or remove the pin)`;
    default:
      return 'the event carries none; send the digest with the event (or remove the pin)';
  }
}
