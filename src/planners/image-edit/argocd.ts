/**
 * Argo CD: `Application` / `ApplicationSet` sources (`spec.source`, `spec.sources[]`, and the
 * ApplicationSet `spec.template.spec` equivalents) and `.argocd-source[-<app>].yaml` parameter
 * override files. Inside a source: `kustomize.images` strings (`repo:tag`, `alias=repo:tag`,
 * `repo=newrepo:tag`; the image after `=` is the one that runs), `helm.parameters`
 * (`<prefix>.tag` next to `<prefix>.repository`), `helm.valuesObject` (read as Helm values) and
 * `helm.values: |` (Helm values in a string, edited inside it: `embedded.ts`).
 */
import { isMap, isScalar, isSeq, type YAMLMap } from 'yaml';
import { normalizeName } from '../image-ref.js';
import { readEmbedded } from './embedded.js';
import { readHelmValues } from './helm-values.js';
import {
  hasPlaceholder,
  pairOf,
  pushAll,
  stringSite,
  type DocumentReader,
  type Site,
  type SplitSite,
  type WalkState,
} from './site.js';

/** Reads the image overrides of an Argo CD Application or ApplicationSet document. */
export function readApplication(reader: DocumentReader): Site[] {
  const sites: Site[] = [];
  const root = reader.doc.contents;
  if (!isMap(root)) return sites;
  const specs: Array<{ node: unknown; state: WalkState }> = [];
  const spec = child(reader, root, 'spec', { path: [] });
  if (spec) {
    specs.push(spec);
    reader.throughAlias(spec.node, (specMap) => {
      if (!isMap(specMap)) return;
      const template = child(reader, specMap, 'template', spec.state);
      if (!template) return;
      reader.throughAlias(template.node, (templateMap) => {
        if (!isMap(templateMap)) return;
        const templateSpec = child(reader, templateMap, 'spec', template.state);
        if (templateSpec) specs.push(templateSpec);
      });
    });
  }
  for (const { node, state } of specs) {
    reader.throughAlias(node, (specMap) => {
      if (!isMap(specMap)) return;
      const source = child(reader, specMap, 'source', state);
      if (source) readSource(reader, source.node, source.state, sites);
      const sources = child(reader, specMap, 'sources', state);
      if (sources) {
        reader.throughAlias(sources.node, (list) => {
          if (!isSeq(list)) return;
          list.items.forEach((item, index) =>
            readSource(reader, item, reader.child(sources.state, index, item), sites),
          );
        });
      }
    });
  }
  return sites;
}

/** Reads an `.argocd-source*.yaml` parameter override file (its root is one source's overrides). */
export function readArgoSourceFile(reader: DocumentReader): Site[] {
  const sites: Site[] = [];
  readSource(reader, reader.doc.contents, { path: [] }, sites);
  return sites;
}

function child(
  reader: DocumentReader,
  map: YAMLMap,
  key: string,
  state: WalkState,
): { node: unknown; state: WalkState } | undefined {
  const pair = pairOf(map, key);
  if (!pair) return undefined;
  return { node: pair.value, state: reader.child(state, key, pair.value) };
}

function readSource(reader: DocumentReader, node: unknown, state: WalkState, sites: Site[]): void {
  reader.throughAlias(node, (source) => {
    if (!isMap(source)) return;
    const kustomize = child(reader, source, 'kustomize', state);
    if (kustomize) {
      reader.throughAlias(kustomize.node, (kustomizeMap) => {
        if (!isMap(kustomizeMap)) return;
        const images = child(reader, kustomizeMap, 'images', kustomize.state);
        if (images) readImageStrings(reader, images.node, images.state, sites);
      });
    }
    const helm = child(reader, source, 'helm', state);
    if (helm) {
      reader.throughAlias(helm.node, (helmMap) => {
        if (!isMap(helmMap)) return;
        const parameters = child(reader, helmMap, 'parameters', helm.state);
        if (parameters) readParameters(reader, parameters.node, parameters.state, sites);
        const valuesObject = child(reader, helmMap, 'valuesObject', helm.state);
        if (valuesObject) pushAll(sites, readHelmValues(reader, valuesObject.node, valuesObject.state));
        // `helm.values: |`: Helm values as a string (Argo CD's ApplicationSourceHelm.Values).
        const values = child(reader, helmMap, 'values', helm.state);
        if (values) pushAll(sites, readEmbedded(reader, values.node, values.state, 'helm-values', readHelmValues));
      });
    }
  });
}

function readImageStrings(reader: DocumentReader, node: unknown, state: WalkState, sites: Site[]): void {
  reader.throughAlias(node, (list) => {
    if (!isSeq(list)) return;
    list.items.forEach((item, index) => {
      const field = reader.field(item, reader.child(state, index, item));
      if (!field || field.value === null) return;
      const equals = field.value.indexOf('=');
      const site = stringSite(reader, field, equals >= 0 ? field.value.slice(0, equals + 1) : '');
      if (site) sites.push(site);
    });
  });
}

interface Parameter {
  index: number;
  item: YAMLMap;
  value: unknown;
  text: string | undefined;
}

function readParameters(reader: DocumentReader, node: unknown, state: WalkState, sites: Site[]): void {
  reader.throughAlias(node, (list) => {
    if (!isSeq(list)) return;
    const byName = new Map<string, Parameter>();
    list.items.forEach((item, index) => {
      const entry = reader.resolve(item);
      if (!isMap(entry)) return;
      const name = pairOf(entry, 'name')?.value;
      if (!isScalar(name) || typeof name.value !== 'string') return;
      const valuePair = pairOf(entry, 'value');
      const value = valuePair ? reader.resolve(valuePair.value) : undefined;
      const text =
        isScalar(value) && value.value !== null && typeof value.value !== 'object' ? String(value.value) : undefined;
      byName.set(name.value, { index, item: entry, value: valuePair?.value, text });
    });
    for (const [name, tagParameter] of byName) {
      if (name !== 'tag' && !name.endsWith('.tag')) continue;
      const prefix = name.slice(0, name.length - 'tag'.length);
      // `<prefix>.repository`, or `<prefix>.name` as argocd-image-updater writes its parameters
      // (`image.name` / `image.tag` by default: `pkg/common/constants.go`).
      const repository = byName.get(`${prefix}repository`) ?? (prefix !== '' ? byName.get(`${prefix}name`) : undefined);
      if (!repository?.text) continue;
      const registry = byName.get(`${prefix}registry`)?.text;
      const written = registry ? `${registry.replace(/\/+$/, '')}/${repository.text}` : repository.text;
      const placeholder = [tagParameter, repository, byName.get(`${prefix}digest`)].some(
        (p) => p?.text !== undefined && hasPlaceholder(p.text),
      );
      const nameOf = normalizeName(written);
      if (nameOf === undefined && !placeholder) continue;
      const itemState = reader.child(state, tagParameter.index, list.items[tagParameter.index]);
      const site: SplitSite = {
        form: 'split',
        flavor: 'parameters',
        docIndex: reader.segment.index,
        kind: reader.kind,
        written,
        name: nameOf,
        raw: written,
        placeholder,
        entry: { map: tagParameter.item, path: itemState.path, offset: reader.segment.offset },
        tagKey: 'value',
      };
      if (itemState.blocked) site.blocked = itemState.blocked;
      const tagField =
        tagParameter.value === undefined
          ? undefined
          : reader.field(tagParameter.value, reader.child(itemState, 'value', tagParameter.value));
      if (tagField) site.tag = tagField;
      const digestParameter = byName.get(`${prefix}digest`);
      if (digestParameter?.value !== undefined) {
        const digestState = reader.child(state, digestParameter.index, list.items[digestParameter.index]);
        const digestField = reader.field(
          digestParameter.value,
          reader.child(digestState, 'value', digestParameter.value),
        );
        if (digestField) site.digest = digestField;
      }
      sites.push(site);
    }
  });
}
