/**
 * Inline patches, in a kustomization (`patches[].patch`, `patchesStrategicMerge[]` given as text,
 * `patchesJson6902[].patch`) and in Flux's kustomize-shaped fields. A strategic-merge patch is a
 * manifest: its containers' images are read inside the string. A JSON 6902 patch is a list of
 * operations: a `value` written to a path ending in `/image`, or the `image` of a container a
 * `value` adds or replaces (`/spec/template/spec/containers/-`), is an image string. Both are edited
 * in place inside the string (`embedded.ts`); what cannot be is refused with its line.
 * https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/patches/
 */
import { isMap, isScalar, isSeq, type YAMLMap } from 'yaml';
import { readEmbedded } from './embedded.js';
import { readManifestNode } from './manifest.js';
import { pairOf, pushAll, stringSite, type DocumentReader, type Site, type WalkState } from './site.js';

/** The image sites of one inline patch (the string at `node`). */
export function readInlinePatch(reader: DocumentReader, node: unknown, state: WalkState): Site[] {
  return readEmbedded(reader, node, state, 'manifest', readPatchRoot);
}

function readPatchRoot(reader: DocumentReader, root: unknown, state: WalkState): Site[] {
  if (!isSeq(root)) return readManifestNode(reader, root, state);
  // JSON 6902: [{op: replace, path: /spec/template/spec/containers/0/image, value: repo:tag}]
  const sites: Site[] = [];
  root.items.forEach((item, index) => {
    if (!isMap(item)) return;
    const path = pairOf(item, 'path')?.value;
    const value = pairOf(item, 'value');
    if (!value || !isScalar(path) || typeof path.value !== 'string') return;
    const itemState = reader.child(state, index, item);
    const valueState = reader.child(itemState, 'value', value.value);
    if (/\/image$/.test(path.value)) {
      const field = reader.field(value.value, valueState);
      const site = field && stringSite(reader, field);
      if (site) sites.push(site);
    } else if (/\/(?:initC|ephemeralC|c)ontainers\/(?:\d+|-)$/.test(path.value) && isMap(value.value)) {
      // A whole container added or replaced: its image is an image string.
      const image = pairOf(value.value, 'image');
      const field = image && reader.field(image.value, reader.child(valueState, 'image', image.value));
      const site = field && stringSite(reader, field);
      if (site) sites.push(site);
    }
  });
  return sites;
}

/** Every inline patch of a kustomization-shaped map (`patches`, `patchesStrategicMerge`, `patchesJson6902`). */
export function readInlinePatches(reader: DocumentReader, map: YAMLMap, state: WalkState): Site[] {
  const sites: Site[] = [];
  for (const key of ['patches', 'patchesJson6902', 'patchesStrategicMerge']) {
    const pair = pairOf(map, key);
    if (!pair) continue;
    const listState = reader.child(state, key, pair.value);
    reader.throughAlias(pair.value, (items) => {
      if (!isSeq(items)) return;
      items.items.forEach((item, index) => {
        const itemState = reader.child(listState, index, item);
        reader.throughAlias(item, (entry) => {
          if (!isMap(entry)) {
            // patchesStrategicMerge lists file names and inline patches alike.
            pushAll(sites, readInlinePatch(reader, item, itemState));
            return;
          }
          const patch = pairOf(entry, 'patch');
          if (patch)
            pushAll(sites, readInlinePatch(reader, patch.value, reader.child(itemState, 'patch', patch.value)));
        });
      });
    });
  }
  return sites;
}
