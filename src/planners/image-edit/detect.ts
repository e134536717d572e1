/**
 * Which format a file is: the path decides first (`kustomization.yaml`, `.argocd-source*.yaml`,
 * `values*.yaml`), then the content (`kind:` of each document).
 */
import { isMap, isScalar, type Document, type YAMLMap } from 'yaml';
import type { FileKind } from './types.js';

/** What the path alone says. `yaml` means "some YAML file: look at the content". */
export type PathKind = 'kustomize' | 'argocd-source' | 'helm-values' | 'yaml' | 'unknown';

function basename(path: string): string {
  const slash = Math.max(path.lastIndexOf('/'), path.lastIndexOf('\\'));
  return path.slice(slash + 1);
}

/** The format the path implies. */
export function kindFromPath(path: string): PathKind {
  const name = basename(path);
  if (/^(?:kustomization\.ya?ml|Kustomization)$/.test(name)) return 'kustomize';
  if (/^\.argocd-source(?:-.+)?\.ya?ml$/.test(name)) return 'argocd-source';
  if (/^values.*\.ya?ml$/i.test(name)) return 'helm-values';
  if (/\.ya?ml$/i.test(name)) return 'yaml';
  return 'unknown';
}

function scalarString(map: YAMLMap, key: string): string | undefined {
  const value = map.get(key, true);
  return isScalar(value) && typeof value.value === 'string' ? value.value : undefined;
}

/** The format of one parsed document, by its `apiVersion`/`kind`. */
export function kindOfDocument(doc: Document.Parsed): FileKind {
  const root = doc.contents;
  if (!isMap(root)) return 'unknown';
  const kind = scalarString(root, 'kind');
  const apiVersion = scalarString(root, 'apiVersion');
  if (kind === 'Kustomization' || kind === 'Component') return 'kustomize';
  if ((kind === 'Application' || kind === 'ApplicationSet') && apiVersion?.startsWith('argoproj.io/'))
    return 'argocd-application';
  if (kind !== undefined && apiVersion !== undefined) return 'manifest';
  return 'helm-values';
}

/** How a document of a file is read: the path's format wins over the document's own. */
export function documentKind(pathKind: PathKind, doc: Document.Parsed): FileKind {
  if (pathKind === 'kustomize' || pathKind === 'argocd-source' || pathKind === 'helm-values') return pathKind;
  if (pathKind === 'unknown') return 'unknown';
  return kindOfDocument(doc);
}

/** The file's format from its parsed documents: the first document with content decides. */
export function fileKind(pathKind: PathKind, docs: readonly Document.Parsed[]): FileKind {
  if (pathKind !== 'yaml') return pathKind;
  for (const doc of docs) {
    if (doc.contents === null || (isScalar(doc.contents) && doc.contents.value === null)) continue;
    return kindOfDocument(doc);
  }
  return 'unknown';
}

/**
 * The file's format without parsing it, for files the editor does not need to open: the same
 * decision as {@link fileKind} from `kind:`/`apiVersion:` lines at the start of a line.
 */
export function fileKindFromText(pathKind: PathKind, text: string): FileKind {
  if (pathKind !== 'yaml') return pathKind;
  const kind = /^kind:[ \t]*["']?([A-Za-z]+)/m.exec(text)?.[1];
  const apiVersion = /^apiVersion:[ \t]*["']?([^\s"'#]+)/m.exec(text)?.[1];
  if (kind === 'Kustomization' || kind === 'Component') return 'kustomize';
  if ((kind === 'Application' || kind === 'ApplicationSet') && apiVersion?.startsWith('argoproj.io/'))
    return 'argocd-application';
  if (kind !== undefined && apiVersion !== undefined) return 'manifest';
  return /^[ \t]*[^\s#-][^:\n]*:/m.test(text) ? 'helm-values' : 'unknown';
}
