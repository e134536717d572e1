/**
 * Kustomize `images:` (and the deprecated `imageTags:`) entries. An entry matches by `newName`
 * when it has one, else by `name`; `name` is never rewritten. Entries with `tagSuffix` are left
 * alone. See https://kubectl.docs.kubernetes.io/references/kustomize/kustomization/images/.
 */
import { isMap, isScalar, isSeq, type YAMLMap } from 'yaml';
import { normalizeName, splitReference } from '../image-ref.js';
import { readHelmValues } from './helm-values.js';
import { readInlinePatches } from './patches.js';
import {
  mapHasPlaceholder,
  pairOf,
  pushAll,
  stringSite,
  type DocumentReader,
  type Site,
  type SplitSite,
  type WalkState,
} from './site.js';

/**
 * Reads the image entries of a Kustomization or Component document, or of a Flux Kustomization
 * (`kustomize.toolkit.fluxcd.io`), whose `spec.images` and `spec.patches` are kustomize's own
 * fields, applied by kustomize-controller on top of the path it builds.
 */
export function readKustomization(reader: DocumentReader): Site[] {
  const root = reader.doc.contents;
  if (!isMap(root)) return [];
  const apiVersion = pairOf(root, 'apiVersion')?.value;
  if (
    isScalar(apiVersion) &&
    typeof apiVersion.value === 'string' &&
    apiVersion.value.startsWith('kustomize.toolkit.fluxcd.io/')
  ) {
    const spec = pairOf(root, 'spec');
    const sites: Site[] = [];
    if (spec)
      reader.throughAlias(spec.value, (map) => {
        if (isMap(map))
          pushAll(sites, readKustomizeFields(reader, map, reader.child({ path: [] }, 'spec', spec.value)));
      });
    return sites;
  }
  return readKustomizeFields(reader, root, { path: [] });
}

/**
 * The image sites of a kustomization-shaped map: `images:` (and `imageTags:`) entries,
 * `helmCharts[].valuesInline` (Helm values kustomize inflates) and inline patches. Also read in a
 * Flux HelmRelease's `postRenderers[].kustomize`.
 */
export function readKustomizeFields(reader: DocumentReader, root: YAMLMap, rootState: WalkState): Site[] {
  const sites: Site[] = [];
  for (const listKey of ['images', 'imageTags']) {
    const pair = pairOf(root, listKey);
    if (!pair) continue;
    const listState = reader.child(rootState, listKey, pair.value);
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
    const chartsState = reader.child(rootState, 'helmCharts', charts.value);
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
  pushAll(sites, readInlinePatches(reader, root, rootState));
  return sites;
}

function readEntry(reader: DocumentReader, entry: unknown, state: WalkState): Site | undefined {
  if (!isMap(entry)) return undefined;
  const written = reader.textIn(entry, 'newName') ?? reader.textIn(entry, 'name');
  if (written === undefined || written === '') return undefined;
  const versioned = newNameWithVersion(reader, entry, state);
  if (versioned) return versioned;
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
  const newName = reader.fieldIn(entry, 'newName', state);
  if (tag) site.tag = tag;
  if (digest) site.digest = digest;
  if (newName) site.nameField = newName;
  if (state.blocked) site.blocked = state.blocked;
  // `newTag: {GENERATED_TAG}` without quotes is a YAML map, which kustomize cannot read as a tag.
  const notScalar = (['newTag', 'digest'] as const).find(
    (key) => reader.pairIn(entry, key) && !(key === 'newTag' ? tag : digest),
  );
  if (notScalar && !site.blocked)
    site.blocked = `its ${notScalar} is not a single value (written without quotes, \`{GENERATED_TAG}\` is a YAML map, which kustomize refuses); quote it or replace it with a real version`;
  if (reader.pairIn(entry, 'tagSuffix')) site.frozen = 'the entry uses tagSuffix';
  return site;
}

/**
 * `newName: awesome/postgres:11` (or `…@sha256:…`): kustomize appends the entry's `newTag` or
 * `digest`, or else the resource's own tag, to newName as it is, so the version written inside
 * newName is what renders only when the entry sets neither. Such an entry is edited inside
 * newName, as a string (as Renovate's kustomize manager does); one that also sets newTag or
 * digest renders `awesome/postgres:11:12`, and is refused.
 */
function newNameWithVersion(reader: DocumentReader, entry: YAMLMap, state: WalkState): Site | undefined {
  const newName = reader.textIn(entry, 'newName');
  if (newName === undefined) return undefined;
  const parts = splitReference(newName);
  if (parts.tag === undefined && parts.digest === undefined) return undefined;
  const field = reader.fieldIn(entry, 'newName', state);
  const site = field && stringSite(reader, field);
  if (!site) return undefined;
  if (state.blocked) site.blocked = state.blocked;
  else if (reader.pairIn(entry, 'tagSuffix')) site.frozen = 'the entry uses tagSuffix';
  const newTag = reader.textIn(entry, 'newTag') ?? '';
  const digest = reader.textIn(entry, 'digest') ?? '';
  const also = [newTag !== '' ? 'newTag' : '', digest !== '' ? 'digest' : ''].filter((key) => key !== '');
  if (also.length > 0 && !site.blocked) {
    const rendered = `${newName}${newTag !== '' ? `:${newTag}` : ''}${digest !== '' ? `@${digest}` : ''}`;
    site.blocked = `newName "${newName}" carries a version and the entry also sets ${also.join(' and ')}, so kustomize renders "${rendered}"; keep the version in one place (newName without it, or no ${also.join('/')})`;
  }
  return site;
}
