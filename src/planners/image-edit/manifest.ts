/**
 * Plain Kubernetes manifests: `containers`, `initContainers` and `ephemeralContainers` at any
 * depth (Deployment, CronJob, Pod, `List` items, custom resources embedding pod specs) and image
 * volumes (`volumes[].image.reference`). Never `env`, `args`, annotations or labels;
 * CustomResourceDefinitions are not read at all (their schemas mention `image` everywhere).
 * ConfigMaps' `data` (Secrets' `stringData`) keys named like a values file (`values.yaml`, the
 * `valuesKey` a Flux HelmRelease's `valuesFrom` reads by default) are read as Helm values inside
 * the string (`embedded.ts`). Flux `HelmRelease` documents are read by `flux-resources.ts`.
 */
import { isMap, isScalar, isSeq } from 'yaml';
import { readEmbedded } from './embedded.js';
import { readHelmValues } from './helm-values.js';
import { entriesOf, pairOf, pushAll, stringSite, type DocumentReader, type Site, type WalkState } from './site.js';

const CONTAINER_LISTS = new Set(['containers', 'initContainers', 'ephemeralContainers']);
/** Keys whose contents are data, not pod specs. */
const SKIPPED = new Set([
  'annotations',
  'labels',
  'env',
  'envFrom',
  'args',
  'command',
  'data',
  'stringData',
  'binaryData',
]);

/** Keys of a ConfigMap's `data` (or a Secret's `stringData`) read as Helm values: named like a values file. */
const VALUES_KEY = /^values.*\.ya?ml$/i;

/** Reads the container images and image volumes of one manifest document. */
export function readManifest(reader: DocumentReader): Site[] {
  const sites: Site[] = [];
  const root = reader.doc.contents;
  if (isMap(root)) {
    const kind = pairOf(root, 'kind')?.value;
    if (isScalar(kind) && kind.value === 'CustomResourceDefinition') return sites;
    // Helm values a Flux HelmRelease reads through valuesFrom (valuesKey defaults to values.yaml).
    if (isScalar(kind) && (kind.value === 'ConfigMap' || kind.value === 'Secret')) {
      for (const dataKey of ['data', 'stringData']) {
        if (kind.value === 'ConfigMap' && dataKey === 'stringData') continue;
        if (kind.value === 'Secret' && dataKey === 'data') continue; // base64: not text to edit
        const data = pairOf(root, dataKey);
        if (!data) continue;
        const dataState = reader.child({ path: [] }, dataKey, data.value);
        reader.throughAlias(data.value, (map) => {
          if (!isMap(map)) return;
          for (const [key, value] of entriesOf(map))
            if (VALUES_KEY.test(key))
              pushAll(
                sites,
                readEmbedded(reader, value, reader.child(dataState, key, value), 'helm-values', readHelmValues),
              );
        });
      }
      return sites;
    }
  }
  walk(reader, root, { path: [] }, sites, 0);
  return sites;
}

/** Reads the container images and image volumes under `node` (a patch's root inside a string). */
export function readManifestNode(reader: DocumentReader, node: unknown, state: WalkState): Site[] {
  const sites: Site[] = [];
  walk(reader, node, state, sites, 0);
  return sites;
}

function walk(reader: DocumentReader, node: unknown, state: WalkState, sites: Site[], depth: number): void {
  if (depth > 200) return;
  reader.throughAlias(node, (resolved) => {
    if (isMap(resolved)) {
      for (const [key, value] of entriesOf(resolved)) {
        if (SKIPPED.has(key) || key === '<<') continue;
        const childState = reader.child(state, key, value);
        if (CONTAINER_LISTS.has(key)) readItems(reader, value, childState, sites, readContainer);
        else if (key === 'volumes') readItems(reader, value, childState, sites, readVolume);
        else walk(reader, value, childState, sites, depth + 1);
      }
    } else if (isSeq(resolved)) {
      resolved.items.forEach((item, index) => walk(reader, item, reader.child(state, index, item), sites, depth + 1));
    }
  });
}

type ItemReader = (reader: DocumentReader, item: unknown, state: WalkState, sites: Site[]) => void;

function readItems(reader: DocumentReader, list: unknown, state: WalkState, sites: Site[], read: ItemReader): void {
  reader.throughAlias(list, (resolved) => {
    if (!isSeq(resolved)) return;
    resolved.items.forEach((item, index) => {
      const itemState = reader.child(state, index, item);
      reader.throughAlias(item, (entry) => read(reader, entry, itemState, sites));
    });
  });
}

function readContainer(reader: DocumentReader, container: unknown, state: WalkState, sites: Site[]): void {
  if (!isMap(container)) return;
  const pair = pairOf(container, 'image');
  if (!pair) return;
  const field = reader.field(pair.value, reader.child(state, 'image', pair.value));
  const site = field && stringSite(reader, field);
  if (site) sites.push(site);
}

function readVolume(reader: DocumentReader, volume: unknown, state: WalkState, sites: Site[]): void {
  if (!isMap(volume)) return;
  const imagePair = pairOf(volume, 'image');
  if (!imagePair) return;
  const imageState = reader.child(state, 'image', imagePair.value);
  reader.throughAlias(imagePair.value, (image) => {
    if (!isMap(image)) return;
    const pair = pairOf(image, 'reference');
    if (!pair) return;
    const field = reader.field(pair.value, reader.child(imageState, 'reference', pair.value));
    const site = field && stringSite(reader, field);
    if (site) sites.push(site);
  });
}
