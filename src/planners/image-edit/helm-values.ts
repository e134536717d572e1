/**
 * Helm values (and any YAML that is not a manifest or a Kustomization): image maps
 * (`repository` + `tag`/`version`, Bitnami `registry` + `repository`, `digest`) and image strings
 * (`image: repo:tag`, `sidecarImage: repo:tag`; `image: repo` + `imageTag: x`) at any depth,
 * in maps and lists.
 */
import { isMap, isSeq, type YAMLMap } from 'yaml';
import { normalizeName, splitReference } from '../image-ref.js';
import {
  entriesOf,
  mapHasPlaceholder,
  pairOf,
  pushAll,
  stringSite,
  type DocumentReader,
  type Field,
  type Site,
  type SplitSite,
  type WalkState,
} from './site.js';

const IMAGE_MAP_KEYS = new Set(['repository', 'name', 'registry', 'tag', 'version', 'digest']);

/** Reads image maps and image strings under `node` (a whole values document, or a `valuesObject`). */
export function readHelmValues(reader: DocumentReader, node: unknown, state: WalkState = { path: [] }): Site[] {
  const sites: Site[] = [];
  walk(reader, node, state, sites, 0);
  const redirect = globalRegistry(reader, node, state);
  if (redirect) for (const site of sites) redirectSite(site, redirect);
  return sites;
}

/** `global.imageRegistry` of a values document: the registry every image map of the release is pulled from. */
interface Redirect {
  registry: string;
  where: string;
}

/**
 * Bitnami's `global.imageRegistry`: its common chart renders every image map as
 * `<global.imageRegistry>/<repository>` when it is set, whatever the map's own `registry`
 * (bitnami/charts `bitnami/common/templates/_images.tpl`, `common.images.image`:
 * `default .imageRoot.registry ((.global).imageRegistry)`).
 */
function globalRegistry(reader: DocumentReader, node: unknown, state: WalkState): Redirect | undefined {
  const root = reader.resolve(node);
  if (!isMap(root)) return undefined;
  const global = reader.resolve(pairOf(root, 'global')?.value);
  if (!isMap(global)) return undefined;
  const registry = reader.textIn(global, 'imageRegistry');
  if (registry === undefined || registry.trim() === '') return undefined;
  return { registry: registry.replace(/\/+$/, ''), where: [...state.path, 'global', 'imageRegistry'].join('.') };
}

/**
 * An image map of a release whose `global.imageRegistry` is set renders from that registry: it is
 * that image (a push to the mirror sets it), and a push of the repository it names would be
 * asked from the mirror, where it was not pushed: refused, as a kustomize newName rename is.
 */
function redirectSite(site: Site, redirect: Redirect): void {
  if (site.form !== 'split' || site.flavor !== 'helm' || site.dotted !== undefined) return;
  const repository = site.repository;
  if (repository === undefined) return;
  const rendered = `${redirect.registry}/${repository}`;
  const name = normalizeName(rendered);
  if (name === undefined || name === site.name) return;
  if (site.name !== undefined)
    site.redirect = {
      from: site.name,
      reason: `${site.entry.path.join('.') || 'the top level'} renders as ${rendered}, not ${site.written}: ${redirect.where} sends every image of the release to ${redirect.registry}, so a new tag here would be asked from ${redirect.registry}, where it was not pushed; push the image to ${redirect.registry} (its event sets this tag), or remove ${redirect.where}`,
    };
  site.written = rendered;
  site.raw = rendered;
  site.name = name;
  delete site.nameField;
}

/**
 * Keys that hold an image, as Renovate's helm-values manager matches them
 * (`lib/modules/manager/helm-values/util.ts`, `parentKeyRe = /image$/i`): `image`, `sidecarImage`,
 * `inline_image`, `initImage`, `IMAGE`.
 */
function isImageKey(key: string): boolean {
  return /image$/i.test(key);
}

function walk(reader: DocumentReader, node: unknown, state: WalkState, sites: Site[], depth: number): void {
  if (depth > 200) return;
  reader.throughAlias(node, (resolved) => {
    if (isMap(resolved)) {
      const imageMap = readImageMap(reader, resolved, state);
      if (imageMap) sites.push(imageMap);
      pushAll(sites, readDottedKeys(reader, resolved, state));
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
    const where = [...state.path, key].join('.');
    site.elsewhere = `${where} names ${site.written} without a tag and no ${key}Tag${key === 'image' ? ' or tag' : ''} key sits beside it, so the chart supplies the version (often its appVersion), which this file cannot set; write the version into the string once (${site.written}:<tag>), or add a ${key === 'image' ? 'tag' : `${key}Tag`} key the chart reads`;
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

/**
 * The repository of an image map: `repository` (the common chart convention), or `name` next to a
 * `tag` under an image key (`image: {name: …, tag: …}`, optionally with `registry`), the form
 * argocd-image-updater writes Helm values in by default (`DefaultHelmImageName = "image.name"`,
 * `DefaultHelmImageTag = "image.tag"` in its `pkg/common/constants.go`).
 */
function repositoryOf(reader: DocumentReader, map: YAMLMap, state: WalkState): string | undefined {
  const repository = reader.textIn(map, 'repository');
  if (repository !== undefined) return repository;
  const key = state.path[state.path.length - 1];
  if (typeof key !== 'string' || !isImageKey(key) || !reader.pairIn(map, 'tag')) return undefined;
  return reader.textIn(map, 'name');
}

function readImageMap(reader: DocumentReader, map: YAMLMap, state: WalkState): Site | undefined {
  const repository = repositoryOf(reader, map, state);
  if (repository === undefined || repository === '') return undefined;
  const registry = reader.textIn(map, 'registry');
  const versioned = repositoryWithVersion(reader, map, state, repository, registry);
  if (versioned) return versioned;
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
    repository,
  };
  const tag = reader.fieldIn(map, tagKey, state);
  const digest = reader.fieldIn(map, 'digest', state);
  if (tag) site.tag = tag;
  if (digest) site.digest = digest;
  if (!reader.pairIn(map, tagKey) && !reader.pairIn(map, 'digest')) {
    // An anchored map of defaults that other maps merge (`<<: *imageDefaults`) and give their own
    // tag: the merging maps are the images.
    if (state.blocked) return undefined;
    const where = state.path.join('.') || 'the top level';
    site.elsewhere = `${where} sets ${written} with no tag key, so the chart supplies the version (often its appVersion), which this file cannot set; add tag: <the version it runs now> to ${where} once, and Escalator keeps it current from then on`;
  }
  if (!registry) {
    const nameField = reader.fieldIn(map, reader.pairIn(map, 'repository') ? 'repository' : 'name', state);
    if (nameField) site.nameField = nameField;
  }
  if (state.blocked) site.blocked = state.blocked;
  return site;
}

/**
 * `repository: ghcr.io/example/hello:1.0.0` with no tag (or an empty one): the version is inside
 * the repository, so the image is read there as one string and edited in place, as Keel's Helm
 * provider writes it when a chart's image has no tag path (keel-hq/keel `provider/helm3/common.go`,
 * `getPlanValues`: "if tag is not supplied, then user specified full image name"). A map that also
 * sets a tag renders both (`…:1.0.0:1.1.0`) and is refused.
 */
function repositoryWithVersion(
  reader: DocumentReader,
  map: YAMLMap,
  state: WalkState,
  repository: string,
  registry: string | undefined,
): Site | undefined {
  const parts = splitReference(repository);
  if (parts.tag === undefined && parts.digest === undefined) return undefined;
  const key = reader.pairIn(map, 'repository') ? 'repository' : 'name';
  const field = reader.fieldIn(map, key, state);
  if (!field || field.value === null) return undefined;
  const site = stringSite(reader, field);
  if (!site) return undefined;
  if (registry) {
    site.name = normalizeName(`${registry.replace(/\/+$/, '')}/${parts.name}`);
    site.written = parts.name;
  }
  const tagKey = reader.pairIn(map, 'tag') ? 'tag' : reader.pairIn(map, 'version') ? 'version' : undefined;
  const tag = tagKey === undefined ? undefined : reader.textIn(map, tagKey);
  const where = state.path.join('.') || 'the top level';
  if (tagKey !== undefined && tag !== undefined && tag !== '' && !site.blocked)
    site.blocked = `${where}.${key} "${repository}" carries a version and ${where}.${tagKey} sets ${tag} too, so the chart renders both (or one of them, depending on its template); keep the version in one place: ${key} without it, or no ${tagKey}`;
  else if (registry && !site.blocked)
    site.blocked = `${where}.${key} "${repository}" carries a version while ${where}.registry names the registry; keep the version in ${where}.tag instead`;
  return site;
}

/**
 * Literal dotted keys (`image.name: nginx`, `image.tag: v1.0.0`), as argocd-image-updater's
 * `helmvalues` write-back has written them (its `marshalParamsOverride` test "Valid Helm source
 * with Helm values file"). Helm reads such a key as one key with a dot in it, not as `image.tag`,
 * so whether the chart uses it is unknown: the site is reported with its line, and edited only
 * when the configuration says the chart reads such keys (`images[].helmDottedKeys`).
 */
function readDottedKeys(reader: DocumentReader, map: YAMLMap, state: WalkState): Site[] {
  const sites: Site[] = [];
  for (const [key] of entriesOf(map)) {
    if (!key.endsWith('.tag') || key === '.tag') continue;
    const prefix = key.slice(0, -'tag'.length);
    const nameKey = [`${prefix}repository`, `${prefix}name`].find((candidate) => pairOf(map, candidate));
    const written = nameKey ? reader.textIn(map, nameKey) : undefined;
    const name = written ? normalizeName(written) : undefined;
    if (!written || name === undefined) continue;
    const tag = reader.fieldIn(map, key, state);
    const dotted = `"${key}" is one key with a dot in it, which Helm does not read as ${prefix}tag (a "${prefix.slice(0, -1)}" map with a "tag" key); write it as nested keys or set it through helm.parameters, or, when the chart reads this key as it is, set helmDottedKeys: true on the image in .github/escalator.yml`;
    const site: SplitSite = {
      form: 'split',
      flavor: 'helm',
      docIndex: reader.segment.index,
      kind: reader.kind,
      written,
      name,
      raw: written,
      placeholder: false,
      entry: { map, path: state.path, offset: reader.segment.offset },
      tagKey: key,
      blocked: state.blocked ?? dotted,
      dotted,
    };
    if (tag) site.tag = tag;
    sites.push(site);
  }
  return sites;
}
