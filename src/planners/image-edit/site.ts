/**
 * The editor's internal model: a *field* is one scalar in the file (with its exact source range),
 * a *site* is one place that names an image and carries its version, either in one string
 * (`image: nginx:1.2`) or split over fields of a map (`newTag`, `tag`, `digest`).
 * Format readers (kustomize, helm values, manifests, Argo CD) produce sites; the planner edits them.
 */
import {
  isAlias,
  isMap,
  isPair,
  isScalar,
  isSeq,
  visit,
  type Document,
  type Pair,
  type Scalar,
  type YAMLMap,
} from 'yaml';
import { normalizeName, parseImageRef, splitReference } from '../image-ref.js';
import type { Segment } from './parse.js';
import type { ScalarStyle } from './scalar.js';
import { lineEndOf } from '../text.js';
import type { FileKind } from './types.js';

/** A key or index in a document. */
export type PathSegment = string | number;

/** What a Flux setter marker (`# {"$imagepolicy": "ns:policy:tag"}`) says its value holds. */
export type MarkerRole = 'full' | 'tag' | 'name' | 'digest' | 'unknown';

/** A Flux image-automation setter marker on the line of a value. */
export interface FluxMarker {
  /** The comment as written, e.g. `{"$imagepolicy": "flux-system:podinfo:tag"}`. */
  text: string;
  role: MarkerRole;
  /** The policy the marker names, `<namespace>:<name>` (the role suffix removed). */
  policy: string;
}

/** One scalar value in the file. */
export interface Field {
  /** Absolute offsets of the scalar's source text (quotes included; anchor and tag excluded). */
  start: number;
  end: number;
  path: PathSegment[];
  /** The string as written (a plain `1.10` is `"1.10"`), or null for an empty/null value. */
  value: string | null;
  style: ScalarStyle | 'block';
  /** Why the value cannot be edited in place, when it cannot. */
  blocked?: string;
  /** Set when `blocked` comes from an anchored collection that aliases use (see {@link Shared}). */
  shared?: Shared;
  marker?: FluxMarker;
}

/**
 * An anchored map or list that aliases use: the walk is inside it on the anchor's `side`, or
 * inside one of its alias `use`s (the alias's offset). `aliases` counts the aliases of the anchor
 * in the document and `anchors` the nodes that define it, so the editor can tell when every use
 * is an image it edits anyway.
 */
export interface Shared {
  anchor: string;
  side: 'anchor' | 'alias';
  use?: number;
  aliases: number;
  anchors: number;
  /** The blocking reason this sharing gave. */
  blocked: string;
}

/** Where a site was read from, for placing new keys. */
export interface EntryMap {
  map: YAMLMap;
  path: PathSegment[];
  /** Absolute offset of the segment's text (node ranges are relative to it). */
  offset: number;
}

/** Marks a site read inside a YAML string (`helm.values: |`): see `embedded.ts`. */
export interface EmbeddedIn {
  /** The path of the string in its document (what the outer parse sees change). */
  path: PathSegment[];
  /** Why the string cannot be edited in place, when it cannot. */
  blocked?: string;
}

interface SiteBase {
  docIndex: number;
  kind: FileKind;
  /** The repository as the file spells it. */
  written: string;
  /** Normalized repository name, or undefined when the spelling is not a valid name. */
  name: string | undefined;
  /** The raw text the name was read from (to spot templated names that may be the image). */
  raw: string;
  /** A template placeholder (`{{ }}`, `${X}`, `$(X)`) in the entry. */
  placeholder: boolean;
  /** Entry-level reason the site cannot be edited (reached through an alias, shared anchor). */
  blocked?: string;
  /** Entry-level reason the site is deliberately left alone (Kustomize `tagSuffix`). */
  frozen?: string;
  /**
   * Where the version that renders comes from when it is not in this site's own fields (an image
   * map with no tag key, whose chart supplies the version; an untagged image string): nothing here
   * can be set to the new version, so the site is refused with this reason and its line, never
   * reported as current. The one model every reader fills in: "current" is said only when the
   * fields that render the version already hold it.
   */
  elsewhere?: string;
  /**
   * Set when what renders is another repository than the file names (Bitnami's
   * `global.imageRegistry`): `name` is the rendered repository, and an event for `from` (the one
   * the file names) is refused with `reason`, as a kustomize newName rename is.
   */
  redirect?: { from: string; reason: string };
  /** Set when the site was read inside a YAML string; its edits are proved against the string's own parse. */
  embedded?: EmbeddedIn;
  /** Why the reference names an image but is not a valid reference (a `{GENERATED_TAG}` tag, a short digest). */
  malformed?: string;
  /**
   * The repository to write in place of the one the file names: set when a Flux marker's policy
   * is configured to set the event's image and the file names another repository (Flux's setters
   * write the policy's image name there too).
   */
  renameTo?: string;
}

/** An image written as one string: `image: ghcr.io/example/app:1.2@sha256:…`. */
export interface StringSite extends SiteBase {
  form: 'string';
  field: Field;
  /** Text kept before the reference (`alias=` in Argo CD kustomize images). */
  prefix: string;
  tag?: string;
  digest?: string;
}

/** An image whose version lives in separate fields of a map. */
export interface SplitSite extends SiteBase {
  form: 'split';
  /** `flux`: fields only Flux setter markers make a site of; no key is ever added to them. */
  flavor: 'kustomize' | 'helm' | 'parameters' | 'flux';
  /** The map holding the fields (where new keys go). */
  entry: EntryMap;
  /** The tag key's name (`newTag`, `tag`, `version`, or `value` of a `*.tag` parameter). */
  tagKey: string;
  tag?: Field;
  digest?: Field;
  /** The field that holds the repository (Kustomize newName, Helm repository, a `:name`-marked field), for renames. */
  nameField?: Field;
  /** Set on literal dotted keys (`image.tag` as one key): the reason they are not edited unless configured. */
  dotted?: string;
  /** A Helm image map's `repository` as written (without its `registry`), for a registry redirect. */
  repository?: string;
}

export type Site = StringSite | SplitSite;

const PLACEHOLDER = /\{\{|\}\}|\$\{[^}]*\}|\$\([^)]*\)/;

/** Whether `text` holds a template placeholder. */
export function hasPlaceholder(text: string): boolean {
  return PLACEHOLDER.test(text);
}

const MARKER = /^[ \t]*#[ \t]*(\{[ \t]*"\$imagepolicy"[ \t]*:[ \t]*"([^"]*)"[ \t]*\})/;

/**
 * Appends `items` to `target` one by one: a spread (`push(...items)`) passes every item as an
 * argument and throws `RangeError` past V8's argument limit, which a file of 150,000 images reaches.
 */
export function pushAll<T>(target: T[], items: Iterable<T>): void {
  for (const item of items) target.push(item);
}

/** The reader's position in a document. */
export interface WalkState {
  path: PathSegment[];
  /** Set when the walk is inside a node reached through `*alias` or an anchor used elsewhere. */
  blocked?: string;
  shared?: Shared;
}

/** Shared reading context for one document. */
export class DocumentReader {
  readonly referenced: Set<string>;
  private depth = 0;

  constructor(
    readonly segment: Segment,
    readonly fileText: string,
    readonly kind: FileKind,
  ) {
    this.referenced = new Set();
    // Only documents whose own text has a `*` can hold aliases (the segment may be the whole file).
    const [docStart, docEnd] = segment.doc.range;
    const star = segment.text.indexOf('*', docStart);
    if (star !== -1 && star < docEnd)
      visit(segment.doc, {
        Alias: (_key, node) => {
          this.referenced.add(node.source);
          this.aliasCount.set(node.source, (this.aliasCount.get(node.source) ?? 0) + 1);
        },
        Node: (_key, node) => {
          const anchor = (node as { anchor?: string }).anchor;
          if (anchor !== undefined) this.anchorCount.set(anchor, (this.anchorCount.get(anchor) ?? 0) + 1);
        },
      });
  }

  private readonly aliasCount = new Map<string, number>();
  private readonly anchorCount = new Map<string, number>();

  private shared(anchor: string, side: 'anchor' | 'alias', blocked: string, use?: number): Shared {
    const shared: Shared = {
      anchor,
      side,
      aliases: this.aliasCount.get(anchor) ?? 0,
      anchors: this.anchorCount.get(anchor) ?? 0,
      blocked,
    };
    if (use !== undefined) shared.use = use;
    return shared;
  }

  get doc(): Document.Parsed {
    return this.segment.doc;
  }

  /** The state for a child node: inherits blocking, adds blocking for shared anchors. */
  child(state: WalkState, key: PathSegment, node: unknown): WalkState {
    const path = [...state.path, key];
    if (state.blocked)
      return state.shared ? { path, blocked: state.blocked, shared: state.shared } : { path, blocked: state.blocked };
    if (isAlias(node)) {
      const blocked = `the value at this place is the alias *${node.source}; edit the anchored value &${node.source} instead, or un-alias it`;
      const target = this.segment.aliases.get(node);
      return isMap(target) || isSeq(target)
        ? { path, blocked, shared: this.shared(node.source, 'alias', blocked, node.range?.[0] ?? -1) }
        : { path, blocked };
    }
    const anchor = (node as { anchor?: string } | null)?.anchor;
    if (anchor !== undefined && this.referenced.has(anchor)) {
      const blocked = `the value sits under the anchor &${anchor}, which the alias *${anchor} uses elsewhere; changing it would change those places too`;
      return isMap(node) || isSeq(node)
        ? { path, blocked, shared: this.shared(anchor, 'anchor', blocked) }
        : { path, blocked };
    }
    return { path };
  }

  /** Follows an alias to its anchored node (nested aliases are not followed). */
  resolve(node: unknown): unknown {
    if (!isAlias(node)) return node;
    if (this.depth > 0) return undefined;
    return this.segment.aliases.get(node);
  }

  /** Runs `fn` on the node an alias points to, at most one alias deep. */
  throughAlias(node: unknown, fn: (resolved: unknown) => void): void {
    if (!isAlias(node)) {
      fn(node);
      return;
    }
    if (this.depth > 0) return;
    this.depth += 1;
    try {
      fn(this.segment.aliases.get(node));
    } finally {
      this.depth -= 1;
    }
  }

  /**
   * The pair for `key` in `map`, written there or inherited through YAML merge keys
   * (`<<: *defaults`, `<<: [*a, *b]`; the map's own keys win, then the first source that has it).
   * `via` names the anchor an inherited pair comes from.
   */
  pairIn(map: YAMLMap, key: string): { pair: Pair; via?: string } | undefined {
    const own = pairOf(map, key);
    if (own) return { pair: own };
    const merge = pairOf(map, '<<');
    if (!merge) return undefined;
    const sources = isSeq(merge.value) ? merge.value.items : [merge.value];
    for (const source of sources) {
      const target = isAlias(source) ? this.resolve(source) : source;
      if (!isMap(target)) continue;
      const pair = pairOf(target, key);
      if (pair) return { pair, via: isAlias(source) ? source.source : '<<' };
    }
    return undefined;
  }

  /** The field for `key` in `map` (see {@link pairIn}); inherited values cannot be edited here. */
  fieldIn(map: YAMLMap, key: string, state: WalkState): Field | undefined {
    const found = this.pairIn(map, key);
    if (!found) return undefined;
    if (found.via === undefined) return this.field(found.pair.value, this.child(state, key, found.pair.value));
    const blocked = `${key} is inherited through the merge key << from &${found.via}, which other maps may share; set ${key} in this map to override it`;
    const field = this.field(found.pair.value, { path: [...state.path, key], blocked });
    if (field) field.blocked = blocked;
    return field;
  }

  /** The scalar text of `key` in `map` (own or inherited), for names; undefined when absent or not scalar. */
  textIn(map: YAMLMap, key: string): string | undefined {
    const value = this.resolve(this.pairIn(map, key)?.pair.value);
    if (!isScalar(value) || value.value === null || value.value === undefined || typeof value.value === 'object')
      return undefined;
    return String(value.value);
  }

  /** A field for a scalar value, or undefined when the node is not a scalar (or alias of one). */
  field(node: unknown, state: WalkState): Field | undefined {
    if (isAlias(node)) {
      const target = this.resolve(node);
      if (!isScalar(target)) return undefined;
      const field = this.field(target, state);
      if (field)
        field.blocked =
          state.blocked ??
          `the value is the alias *${node.source}; edit the anchored value &${node.source} instead, or un-alias it`;
      return field;
    }
    if (!isScalar(node) || !node.range) return undefined;
    const scalar = node as Scalar;
    const offset = this.segment.offset;
    const [start, end] = scalar.range as [number, number, number];
    const style = styleOf(scalar);
    let value: string | null;
    if (scalar.value === null || scalar.value === undefined) value = style === 'plain' ? null : '';
    else if (style === 'plain') value = (scalar as { source?: string }).source ?? this.segment.text.slice(start, end);
    else value = String(scalar.value);
    if (typeof scalar.value === 'object' && scalar.value !== null) value = this.segment.text.slice(start, end);
    const field: Field = { start: start + offset, end: end + offset, path: state.path, value, style };
    let blocked = state.blocked;
    if (blocked && state.shared) field.shared = state.shared;
    if (!blocked && scalar.anchor !== undefined && this.referenced.has(scalar.anchor)) {
      blocked = `the value carries the anchor &${scalar.anchor}, which the alias *${scalar.anchor} uses elsewhere; changing it would change those places too`;
    }
    if (!blocked && style === 'block')
      blocked = 'the value is a block scalar (| or >); write it as a one-line scalar first';
    if (blocked) field.blocked = blocked;
    const marker = this.markerAfter(field.end);
    if (marker) field.marker = marker;
    return field;
  }

  private markerAfter(end: number): FluxMarker | undefined {
    const lineEnd = lineEndOf(this.fileText, end).end;
    const match = MARKER.exec(this.fileText.slice(end, lineEnd));
    if (!match) return undefined;
    const policy = (match[2] ?? '').split(':');
    let role: MarkerRole = 'unknown';
    if (policy.length === 2) role = 'full';
    else if (policy.length === 3)
      role =
        ({ tag: 'tag', name: 'name', digest: 'digest' } as const)[policy[2] as 'tag' | 'name' | 'digest'] ?? 'unknown';
    return { text: match[1] ?? '', role, policy: policy.slice(0, 2).join(':') };
  }
}

function styleOf(scalar: Scalar): ScalarStyle | 'block' {
  switch (scalar.type) {
    case 'QUOTE_DOUBLE':
      return 'double';
    case 'QUOTE_SINGLE':
      return 'single';
    case 'BLOCK_FOLDED':
    case 'BLOCK_LITERAL':
      return 'block';
    default:
      return 'plain';
  }
}

/** The pair with a plain string key `key`, if any. */
export function pairOf(map: YAMLMap, key: string): Pair | undefined {
  for (const item of map.items) {
    if (isPair(item) && isScalar(item.key) && item.key.value === key) return item as Pair;
  }
  return undefined;
}

/** The string keys of a map with their values, in order. */
export function entriesOf(map: YAMLMap): Array<[string, unknown, Pair]> {
  const result: Array<[string, unknown, Pair]> = [];
  for (const item of map.items) {
    if (!isPair(item)) continue;
    const key = isScalar(item.key) ? item.key.value : undefined;
    if (typeof key === 'string' || typeof key === 'number' || typeof key === 'boolean')
      result.push([String(key), item.value, item as Pair]);
  }
  return result;
}

/** Whether any scalar directly in the map (not nested) holds a template placeholder. */
export function mapHasPlaceholder(map: YAMLMap): boolean {
  return map.items.some(
    (item) =>
      isPair(item) && isScalar(item.value) && typeof item.value.value === 'string' && hasPlaceholder(item.value.value),
  );
}

/**
 * A string site for an image reference written as one string, or undefined when the text is
 * not an image reference (and holds no placeholder that could hide one).
 */
export function stringSite(reader: DocumentReader, field: Field, prefix = ''): StringSite | undefined {
  if (field.value === null) return undefined;
  // A block scalar holding an image still names it (and is refused as a block scalar later).
  const raw = (field.style === 'block' ? field.value.trim() : field.value).slice(prefix.length);
  const parts = splitReference(raw);
  const placeholder = hasPlaceholder(field.value);
  const name = normalizeName(parts.name);
  if (name === undefined && !placeholder) return undefined;
  // The name is an image but the version is not valid (`my-image:{GENERATED_TAG}`, `app@sha256:abc`):
  // kustomize and the kubelet accept or reject such text on their own terms; it is reported, never skipped.
  const parsed = name !== undefined && !placeholder ? parseImageRef(raw) : undefined;
  const site: StringSite = {
    form: 'string',
    docIndex: reader.segment.index,
    kind: reader.kind,
    written: parts.name,
    name,
    raw,
    placeholder,
    field,
    prefix,
  };
  if (parts.tag !== undefined) site.tag = parts.tag;
  if (parts.digest !== undefined) site.digest = parts.digest;
  if (parsed && !parsed.ok) site.malformed = parsed.reason;
  return site;
}

/** The Flux setter markers on a site's own fields. */
export function markersOf(site: Site): FluxMarker[] {
  const fields = site.form === 'string' ? [site.field] : [site.tag, site.digest, site.nameField];
  return fields.flatMap((field) => (field?.marker ? [field.marker] : []));
}
