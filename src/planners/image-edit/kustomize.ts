/**
 * Kustomize `images:` (and the deprecated `imageTags:`) entries. An entry matches by `newName`
 * when it has one, else by `name`; `name` is never rewritten. Entries with `tagSuffix` are left
 * alone. See https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/images/.
 */
import { isMap, isSeq } from 'yaml';
import { normalizeName } from '../image-ref.js';
import { readHelmValues } from './helm-values.js';
import {
  mapHasPlaceholder,
  pairOf,
  pushAll,
  type DocumentReader,
  type Site,
  type SplitSite,
  type WalkState,
} from './site.js';

/** Reads the image entries of a Kustomization or Component document. */
export function readKustomization(reader: DocumentReader): Site[] {
  const sites: Site[] = [];
  const root = reader.doc.contents;
  if (!isMap(root)) return sites;
  for (const listKey of ['images', 'imageTags']) {
    const pair = pairOf(root, listKey);
    if (!pair) continue;
    const listState = reader.child({ path: [] }, listKey, pair.value);
    reader.throughAlias(pair.value, (list) => {
      if (!isSeq(list)) return;
      list.items.forEach((item, index) => {
        const state = reader.child(listState, index, item);
        reader.throughAlias(item, (entry) => {
          const site = readEntry(reader, entry, state);
          if (site) sites.push(site);
        });
      });
    });
  }
  // helmCharts[].valuesInline are Helm values inflated by kustomize.
  const charts = pairOf(root, 'helmCharts');
  if (charts) {
    const chartsState = reader.child({ path: [] }, 'helmCharts', charts.value);
    reader.throughAlias(charts.value, (list) => {
      if (!isSeq(list)) return;
      list.items.forEach((item, index) => {
        const chartState = reader.child(chartsState, index, item);
        reader.throughAlias(item, (chart) => {
          const values = isMap(chart) ? pairOf(chart, 'valuesInline') : undefined;
          if (values)
            pushAll(
              sites,
              readHelmValues(reader, values.value, reader.child(chartState, 'valuesInline', values.value)),
            );
        });
      });
    });
  }
  return sites;
}

function readEntry(reader: DocumentReader, entry: unknown, state: WalkState): SplitSite | undefined {
  if (!isMap(entry)) return undefined;
  const written = reader.textIn(entry, 'newName') ?? reader.textIn(entry, 'name');
  if (written === undefined || written === '') return undefined;
  const site: SplitSite = {
    form: 'split',
    flavor: 'kustomize',
    docIndex: reader.segment.index,
    kind: reader.kind,
    written,
    name: normalizeName(written),
    raw: written,
    placeholder: mapHasPlaceholder(entry),
    entry: { map: entry, path: state.path, offset: reader.segment.offset },
    tagKey: 'newTag',
  };
  const tag = reader.fieldIn(entry, 'newTag', state);
  const digest = reader.fieldIn(entry, 'digest', state);
  if (tag) site.tag = tag;
  if (digest) site.digest = digest;
  if (state.blocked) site.blocked = state.blocked;
  if (reader.pairIn(entry, 'tagSuffix')) site.frozen = 'the entry uses tagSuffix';
  return site;
}
