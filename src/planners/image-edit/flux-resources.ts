/**
 * A Flux HelmRelease (`helm.toolkit.fluxcd.io`): Helm values in `spec.values`, and kustomize
 * images and patches in `spec.postRenderers[].kustomize`, which helm-controller applies to the
 * chart's render (its `PostRenderer.Kustomize`: `images`, `patches`, kustomize's own types).
 * The values a `spec.valuesFrom` ConfigMap holds are read in the ConfigMap (`manifest.ts`).
 */
import { isMap, isScalar, isSeq, type Document } from 'yaml';
import { readHelmValues } from './helm-values.js';
import { readKustomizeFields } from './kustomize.js';
import { pairOf, pushAll, type DocumentReader, type Site } from './site.js';

/** Whether a document is a HelmRelease (any apiVersion: Flux's, as every earlier version of the editor read it). */
export function isHelmRelease(doc: Document.Parsed): boolean {
  const root = doc.contents;
  const kind = isMap(root) ? pairOf(root, 'kind')?.value : undefined;
  return isScalar(kind) && kind.value === 'HelmRelease';
}

/** Reads the image sites of a HelmRelease document. */
export function readHelmRelease(reader: DocumentReader): Site[] {
  const sites: Site[] = [];
  const root = reader.doc.contents;
  if (!isMap(root)) return sites;
  const spec = pairOf(root, 'spec');
  const specState = reader.child({ path: [] }, 'spec', spec?.value);
  reader.throughAlias(spec?.value, (specMap) => {
    if (!isMap(specMap)) return;
    const values = pairOf(specMap, 'values');
    if (values) pushAll(sites, readHelmValues(reader, values.value, reader.child(specState, 'values', values.value)));
    const renderers = pairOf(specMap, 'postRenderers');
    if (!renderers) return;
    const renderersState = reader.child(specState, 'postRenderers', renderers.value);
    reader.throughAlias(renderers.value, (list) => {
      if (!isSeq(list)) return;
      list.items.forEach((item, index) => {
        const itemState = reader.child(renderersState, index, item);
        reader.throughAlias(item, (renderer) => {
          const kustomize = isMap(renderer) ? pairOf(renderer, 'kustomize') : undefined;
          if (!kustomize) return;
          const kustomizeState = reader.child(itemState, 'kustomize', kustomize.value);
          reader.throughAlias(kustomize.value, (map) => {
            if (isMap(map)) pushAll(sites, readKustomizeFields(reader, map, kustomizeState));
          });
        });
      });
    });
  });
  return sites;
}
