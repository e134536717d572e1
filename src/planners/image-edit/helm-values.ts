/**
 * Helm values (and any YAML that is not a manifest or a Kustomization): image maps
 * (`repository` + `tag`/`version`, Bitnami `registry` + `repository`, `digest`) and image strings
 * (`image: repo:tag`, `sidecarImage: repo:tag`; `image: repo` + `imageTag: x`) at any depth,
 * in maps and lists.
 */
import { isMap, isSeq, type YAMLMap } from 'yaml';
import { normalizeName } from '../image-ref.js';
import {
  entriesOf,
  mapHasPlaceholder,
  pairOf,
  stringSite,
  type DocumentReader,
  type Field,
  type Site,
  type SplitSite,
  type WalkState,
} from './site.js';

const IMAGE_MAP_KEYS = new Set(['repository', 'registry', 'tag', 'version', 'digest']);

/** Reads image maps and image strings under `node` (a whole values document, or a `valuesObject`). */
export function readHelmValues(reader: DocumentReader, node: unknown, state: WalkState = { path: [] }): Site[] {
  const sites: Site[] = [];
  walk(reader, node, state, sites, 0);
  return sites;
}

function isImageKey(key: string): boolean {
  return key === 'image' || /[a-z0-9]Image$/.test(key);
}

function walk(reader: DocumentReader, node: unknown, state: WalkState, sites: Site[], depth: number): void {
  if (depth > 200) return;
  reader.throughAlias(node, (resolved) => {
    if (isMap(resolved)) {
      const imageMap = readImageMap(reader, resolved, state);
      if (imageMap) sites.push(imageMap);
      const consumed = new Set<string>(imageMap ? IMAGE_MAP_KEYS : []);
      for (const [key, value] of entriesOf(resolved)) {
        // Merged maps are read where they are defined (under their anchor).
        if (consumed.has(key) || key === '<<') continue;
        const childState = reader.child(state, key, value);
        if (isImageKey(key)) {
          const field = reader.field(value, childState);
          if (field) {
            const site = readImageString(reader, resolved, key, field, state, consumed);
            if (site) sites.push(site);
            continue;
          }
        }
        walk(reader, value, childState, sites, depth + 1);
      }
    } else if (isSeq(resolved)) {
      resolved.items.forEach((item, index) => walk(reader, item, reader.child(state, index, item), sites, depth + 1));
    }
  });
}

/**
 * An image string. When it has no tag and no digest, the chart adds the version from elsewhere:
 * a sibling `<key>Tag` (or `tag` next to `image`) becomes the tag field; without one the chart's
 * default applies and the string is left alone (appending a tag could double it in the template).
 */
function readImageString(
  reader: DocumentReader,
  map: YAMLMap,
  key: string,
  field: Field,
  state: WalkState,
  consumed: Set<string>,
): Site | undefined {
  const site = stringSite(reader, field);
  if (!site || site.tag !== undefined || site.digest !== undefined) return site;
  const tagKey = [`${key}Tag`, ...(key === 'image' ? ['tag', 'version'] : [])].find((candidate) =>
    pairOf(map, candidate),
  );
  if (tagKey === undefined) {
    site.frozen = 'the image string has no tag, so the chart supplies it';
    return site;
  }
  const digestKey = [`${key}Digest`, ...(key === 'image' ? ['digest'] : [])].find((candidate) =>
    pairOf(map, candidate),
  );
  const fieldOf = (name: string) => {
    const pair = pairOf(map, name);
    return pair ? reader.field(pair.value, reader.child(state, name, pair.value)) : undefined;
  };
  const split: SplitSite = {
    form: 'split',
    flavor: 'helm',
    docIndex: site.docIndex,
    kind: site.kind,
    written: site.written,
    name: site.name,
    raw: site.raw,
    placeholder: site.placeholder || mapHasPlaceholder(map),
    entry: { map, path: state.path, offset: reader.segment.offset },
    tagKey,
  };
  const tag = fieldOf(tagKey);
  if (tag) split.tag = tag;
  if (digestKey) {
    const digest = fieldOf(digestKey);
    if (digest) split.digest = digest;
    consumed.add(digestKey);
  }
  if (state.blocked) split.blocked = state.blocked;
  consumed.add(tagKey);
  return split;
}

function readImageMap(reader: DocumentReader, map: YAMLMap, state: WalkState): SplitSite | undefined {
  const repository = reader.textIn(map, 'repository');
  if (repository === undefined || repository === '') return undefined;
  const registry = reader.textIn(map, 'registry');
  const written = registry ? `${registry.replace(/\/+$/, '')}/${repository}` : repository;
  const name = normalizeName(written);
  const placeholder = mapHasPlaceholder(map);
  if (name === undefined && !placeholder) return undefined;
  const tagKey = reader.pairIn(map, 'tag') ? 'tag' : reader.pairIn(map, 'version') ? 'version' : 'tag';
  const site: SplitSite = {
    form: 'split',
    flavor: 'helm',
    docIndex: reader.segment.index,
    kind: reader.kind,
    written,
    name,
    raw: written,
    placeholder,
    entry: { map, path: state.path, offset: reader.segment.offset },
    tagKey,
  };
  const tag = reader.fieldIn(map, tagKey, state);
  const digest = reader.fieldIn(map, 'digest', state);
  if (tag) site.tag = tag;
  if (digest) site.digest = digest;
  if (state.blocked) site.blocked = state.blocked;
  return site;
}
