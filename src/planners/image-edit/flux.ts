/**
 * Flux image-automation setter markers as edit sites. Flux marks the fields it updates with a line
 * comment naming an ImagePolicy (fluxcd/image-automation-controller `pkg/update/setters.go`;
 * its testdata `pkg/update/testdata/setters`):
 *
 *     image: ghcr.io/example/hello:1.0.0 # {"$imagepolicy": "flux-system:hello"}
 *     repository: ghcr.io/example/hello # {"$imagepolicy": "flux-system:hello:name"}
 *     tag: 1.0.0 # {"$imagepolicy": "flux-system:hello:tag"}
 *     digest: sha256:… # {"$imagepolicy": "flux-system:hello:digest"}
 *
 * A marked field is an edit site even where the format readers look for no image (a custom
 * resource's `spec.imageTag`, a patch target, a `newDigest`-style key): a full marker names its
 * image itself; `:tag` and `:digest` fields take the image of the `:name` field of the same policy
 * in the same document, or the image `images[].fluxPolicies` maps the policy to. Fields the readers
 * already see are left to them.
 */
import { isMap, isSeq, type YAMLMap } from 'yaml';
import { normalizeName } from '../image-ref.js';
import {
  entriesOf,
  stringSite,
  type DocumentReader,
  type Field,
  type Site,
  type SplitSite,
  type WalkState,
} from './site.js';

interface Marked {
  field: Field;
  map: YAMLMap;
  mapPath: WalkState['path'];
  key: string;
}

/** Marked fields of a document that no reader made a site of, as sites. `seen`: starts of fields already in sites. */
export function readFluxMarkers(reader: DocumentReader, seen: ReadonlySet<number>): Site[] {
  const marked: Marked[] = [];
  collect(reader, reader.doc.contents, { path: [] }, marked, 0);
  const sites: Site[] = [];
  const byPolicy = new Map<string, Marked[]>();
  for (const item of marked) {
    const marker = item.field.marker;
    if (!marker || seen.has(item.field.start)) continue;
    if (marker.role === 'full') {
      const site = stringSite(reader, item.field);
      if (site) sites.push(site);
      continue;
    }
    const list = byPolicy.get(marker.policy) ?? [];
    list.push(item);
    byPolicy.set(marker.policy, list);
  }
  for (const items of byPolicy.values()) {
    const nameItem = items.find((item) => item.field.marker?.role === 'name');
    const tagItem = items.find((item) => item.field.marker?.role === 'tag');
    const digestItem = items.find((item) => item.field.marker?.role === 'digest');
    const anchor = tagItem ?? digestItem;
    if (!anchor) continue;
    // Without a :name field the image is known only from the configuration (`images[].fluxPolicies`).
    const written = nameItem?.field.value ?? '';
    const site: SplitSite = {
      form: 'split',
      flavor: 'flux',
      docIndex: reader.segment.index,
      kind: reader.kind,
      written,
      name: written === '' ? undefined : normalizeName(written),
      raw: written,
      placeholder: false,
      entry: { map: anchor.map, path: anchor.mapPath, offset: reader.segment.offset },
      tagKey: tagItem?.key ?? 'tag',
    };
    if (tagItem) site.tag = tagItem.field;
    if (digestItem) site.digest = digestItem.field;
    if (nameItem) site.nameField = nameItem.field;
    sites.push(site);
  }
  return sites;
}

function collect(reader: DocumentReader, node: unknown, state: WalkState, into: Marked[], depth: number): void {
  if (depth > 200) return;
  if (isMap(node)) {
    for (const [key, value] of entriesOf(node)) {
      const childState = reader.child(state, key, value);
      if (isMap(value) || isSeq(value)) collect(reader, value, childState, into, depth + 1);
      else {
        const field = reader.field(value, childState);
        if (field?.marker) into.push({ field, map: node, mapPath: state.path, key });
      }
    }
  } else if (isSeq(node)) {
    node.items.forEach((item, index) => collect(reader, item, reader.child(state, index, item), into, depth + 1));
  }
}
