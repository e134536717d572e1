/**
 * What kustomize makes of a file's images, across files: a manifest listed (directly or through
 * other kustomizations) by a kustomization whose `images:` entry renames the image to a mirror
 * (`name: alpine`, `newName: myregistry:1234/my/cool-alpine`) does not render as the image it
 * names. The editor decides per rendered image, so it needs to know, for each file, which
 * renames apply on each way the file is rendered. Pure: texts in, views out.
 *
 * Which files each kustomization among the files renders comes from the one kustomization reader
 * (`../kustomize/`, shared with the diff's target graph): `resources`, `bases`, `components`,
 * `patchesStrategicMerge` files and `patches[].path`, as kustomize reads them (field names matched
 * case-insensitively, YAML 1.1 merge keys applied, the first document only; remote and outside
 * references left out; a directory stands for the kustomization in it). The `images:` entries that
 * set `newName` are read here. A kustomization that no other one lists is a root: each root that
 * reaches a file is one way the file is rendered.
 */
import { isMap, isScalar, isSeq, type YAMLMap } from 'yaml';
import { normalizeName, splitReference } from '../image-ref.js';
import {
  isKustomizationPath,
  kustomizationPaths,
  landReference,
  readKustomization as readKustomizationFields,
  renderedReferences,
} from '../kustomize/index.js';
import { dirname } from '../repo-path.js';
import { loadFile } from './parse.js';
import { pairOf } from './site.js';
import type { KustomizeRename, RenderView } from './types.js';

export type { KustomizeRename, RenderView } from './types.js';
export { kustomizationPaths, kustomizationSiblings } from '../kustomize/index.js';

interface Kustomization {
  path: string;
  refs: string[];
  renames: KustomizeRename[];
  /** The `name` of every `images:` entry (what kustomize matches an image's text against). */
  entryNames: string[];
}

function text(map: YAMLMap, key: string): string | undefined {
  const value = pairOf(map, key)?.value;
  return isScalar(value) && (typeof value.value === 'string' || typeof value.value === 'number')
    ? String(value.value)
    : undefined;
}

/**
 * One kustomization: what it renders (from the shared reader, as kustomize applies it) and its
 * renames. Undefined when kustomize could not build it (the shared reader cannot read it: a
 * non-string `resources` entry, say) or the editor cannot read its `images:` (the file does not
 * load: a duplicate key, over the YAML limits), so no rename is ever guessed.
 */
function readKustomization(path: string, source: string): Kustomization | undefined {
  const loaded = loadFile(source);
  const root = loaded.refusals.length === 0 ? loaded.segments[0]?.doc.contents : undefined;
  if (!isMap(root)) return undefined;
  const fields = readKustomizationFields(source, { documents: 'first' });
  if (!fields.ok) return undefined;
  const refs = renderedReferences(fields.value).map((ref) => ref.value);
  const renames: KustomizeRename[] = [];
  const entryNames: string[] = [];
  for (const listKey of ['images', 'imageTags']) {
    const list = pairOf(root, listKey)?.value;
    if (!isSeq(list)) continue;
    list.items.forEach((entry, index) => {
      if (!isMap(entry)) return;
      const name = text(entry, 'name');
      if (name !== undefined) entryNames.push(name);
      const written = text(entry, 'newName');
      if (name === undefined) return;
      const sets = (text(entry, 'newTag') ?? '') !== '' || (text(entry, 'digest') ?? '') !== '';
      // An entry that sets the version without renaming overrides it too: listed as a rename to itself.
      const newName = written === undefined || written === '' ? (sets ? name : undefined) : written;
      if (newName === undefined) return;
      const inside = splitReference(newName);
      const setsVersion = sets || inside.tag !== undefined || inside.digest !== undefined;
      renames.push({ kustomization: path, entry: `${listKey}[${index}]`, name, newName, setsVersion });
    });
  }
  return { path, refs, renames, entryNames };
}

/** The kustomizations among `files`, what each lists (resolved to files among them), and which are listed. */
function graphOf(files: ReadonlyArray<{ path: string; text: string }>): {
  kustomizations: Map<string, Kustomization>;
  edges: Map<string, string[]>;
  listed: Set<string>;
} {
  const paths = new Set(files.map((file) => file.path));
  const kustomizations = new Map<string, Kustomization>();
  for (const file of files) {
    if (!isKustomizationPath(file.path)) continue;
    const read = readKustomization(file.path, file.text);
    if (read) kustomizations.set(file.path, read);
  }
  const edges = new Map<string, string[]>();
  const listed = new Set<string>();
  for (const kustomization of kustomizations.values()) {
    const targets: string[] = [];
    for (const ref of kustomization.refs) {
      const landing = landReference(dirname(kustomization.path), ref);
      if (landing.kind !== 'local') continue;
      const target = landing.path;
      const found = paths.has(target)
        ? target
        : kustomizationPaths(target).find((candidate) => kustomizations.has(candidate));
      if (found === undefined || found === kustomization.path) continue;
      targets.push(found);
      listed.add(found);
    }
    edges.set(kustomization.path, targets);
  }
  return { kustomizations, edges, listed };
}

/**
 * The local paths a kustomization renders (`resources`, `bases`, `components`, patch files),
 * resolved against its directory: each is a file or a directory holding a kustomization. Remote
 * and outside references are left out.
 */
export function kustomizationRefs(path: string, source: string): string[] {
  const read = readKustomization(path, source);
  if (!read) return [];
  return read.refs.flatMap((ref) => {
    const landing = landReference(dirname(path), ref);
    return landing.kind === 'local' ? [landing.path] : [];
  });
}

/**
 * The container images each kustomization among `roots` renders (through the manifests it reaches
 * among `files`) with no `images:` entry of its own for them, as kustomize sees their names there:
 * after the renames of the kustomizations below it, which is what an entry's `name` is matched
 * against. For `kustomize edit set image`-style additions (`environments[].addImages`).
 */
export function imagesWithoutEntry(
  files: ReadonlyArray<{ path: string; text: string }>,
  roots: readonly string[],
  readImages: (file: { path: string; text: string }) => string[],
): Map<string, string[]> {
  const { kustomizations, edges } = graphOf(files);
  const texts = new Map(files.map((file) => [file.path, file.text]));
  const imagesOf = new Map<string, string[]>();
  const result = new Map<string, string[]>();
  for (const root of roots) {
    const own = kustomizations.get(root);
    if (!own) continue;
    const names = new Set<string>();
    // Depth-first, carrying the kustomizations between the root and the file (innermost last).
    const stack: Array<{ path: string; chain: Kustomization[] }> = [{ path: root, chain: [] }];
    const seen = new Set<string>([root]);
    while (stack.length > 0) {
      const { path, chain } = stack.pop() as { path: string; chain: Kustomization[] };
      for (const target of edges.get(path) ?? []) {
        if (seen.has(target)) continue;
        seen.add(target);
        const inner = kustomizations.get(target);
        if (inner) {
          stack.push({ path: target, chain: [...chain, inner] });
          continue;
        }
        const text = texts.get(target);
        if (text === undefined) continue;
        let images = imagesOf.get(target);
        if (!images) {
          images = readImages({ path: target, text });
          imagesOf.set(target, images);
        }
        for (const written of images) {
          // Kustomize applies the innermost kustomization's entries first.
          let name = written;
          for (let i = chain.length - 1; i >= 0; i -= 1) {
            const rename = chain[i]?.renames.find((entry) => entry.name === name);
            if (rename) name = splitReference(rename.newName).name;
          }
          if (!own.entryNames.includes(name)) names.add(name);
        }
      }
    }
    result.set(root, [...names]);
  }
  return result;
}

/**
 * The kustomizations among `candidates` that render an image of `eventName` without an entry for
 * it, each with the name to give the new entry (see {@link imagesWithoutEntry}).
 */
export function missingImageEntries(
  files: ReadonlyArray<{ path: string; text: string }>,
  candidates: readonly string[],
  eventName: string,
  readImages: (file: { path: string; text: string }) => string[],
): Map<string, string> {
  const found = new Map<string, string>();
  for (const [root, names] of imagesWithoutEntry(files, candidates, readImages)) {
    const name = names.find((written) => normalizeName(written) === eventName);
    if (name !== undefined) found.set(root, name);
  }
  return found;
}

/**
 * For every file among `files` that some kustomization among them renders, the ways it is
 * rendered (one per root kustomization). Files no kustomization lists are absent: they render
 * as written.
 */
export function kustomizeViews(files: ReadonlyArray<{ path: string; text: string }>): Map<string, RenderView[]> {
  const { kustomizations, edges, listed } = graphOf(files);
  const views = new Map<string, RenderView[]>();
  for (const root of kustomizations.keys()) {
    if (listed.has(root)) continue;
    // Depth-first from the root, carrying the renames of the kustomizations on the way.
    const reached = new Map<string, KustomizeRename[]>();
    const stack: Array<{ path: string; renames: KustomizeRename[] }> = [{ path: root, renames: [] }];
    while (stack.length > 0) {
      const { path, renames } = stack.pop() as { path: string; renames: KustomizeRename[] };
      const own = kustomizations.get(path)?.renames ?? [];
      const carried = [...own, ...renames];
      for (const target of edges.get(path) ?? []) {
        const known = reached.get(target);
        if (known) {
          const added = carried.filter((rename) => !known.includes(rename));
          known.push(...added);
          if (added.length > 0 && kustomizations.has(target)) stack.push({ path: target, renames: known });
          continue;
        }
        reached.set(target, [...carried]);
        if (kustomizations.has(target)) stack.push({ path: target, renames: carried });
      }
    }
    for (const [path, renames] of reached) {
      if (kustomizations.has(path)) continue;
      const list = views.get(path) ?? [];
      list.push({ root, renames });
      views.set(path, list);
    }
  }
  return views;
}

/**
 * How one view renders an image the file spells `written` (name part, as the file writes it):
 * the rename that applies, or undefined when the image renders under its own name. Kustomize
 * matches an entry's `name` against the image's text as written, without normalizing.
 */
export function renameFor(view: RenderView, written: string): KustomizeRename | undefined {
  return view.renames.find((rename) => rename.name === written);
}

/** Whether a rename points at another repository than `name` (normalized). */
export function renamesAway(rename: KustomizeRename, name: string): boolean {
  return normalizeName(splitReference(rename.newName).name) !== name;
}
