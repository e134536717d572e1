import { parseAllDocuments } from 'yaml';
import type { ObjectRef } from './types.js';

/** One Kubernetes object from a render, with its identity. */
export interface ManifestObject extends ObjectRef {
  apiVersion: string;
  body: Record<string, unknown>;
  /** The template helm rendered it from (its `# Source: <chart>/templates/…` line), when there is one. */
  source?: string;
}

export type ParseResult =
  { ok: true; objects: ManifestObject[]; duplicates: string[] } | { ok: false; message: string };

export interface ParseOptions {
  /** Aliases a document may expand; a "billion laughs" document fails instead of eating memory. @default 100 */
  maxAliasCount?: number;
  /** Keep documents that are not Kubernetes objects (no apiVersion/kind) out silently. @default true */
  skipNonObjects?: boolean;
}

/** `apps/v1` → `apps`, `v1` → `` (the core group). */
export function groupOf(apiVersion: string): string {
  const slash = apiVersion.lastIndexOf('/');
  return slash < 0 ? '' : apiVersion.slice(0, slash);
}

/** `group/kind/namespace/name`, the key objects are matched by. */
export function identityKey(ref: ObjectRef): string {
  return `${ref.group}/${ref.kind}/${ref.namespace}/${ref.name}`;
}

/** `Deployment apps/hello` style label for readers: kind and namespace/name. */
export function describeRef(ref: ObjectRef): string {
  return `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ''}${ref.name}`;
}

/** helm prints `# Source: <chart>/templates/<file>` before each document it renders. */
function helmSource(comment: string | null | undefined): string | undefined {
  const match = /^\s*Source: (\S[^\n]*)$/m.exec(comment ?? '');
  return match ? (match[1] as string).trim() : undefined;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Parse a multi-document render into objects. `List` objects are expanded into their items.
 * Objects with the same identity twice keep the first and are reported in `duplicates`.
 */
export function parseManifests(text: string, options: ParseOptions = {}): ParseResult {
  const maxAliasCount = options.maxAliasCount ?? 100;
  const skip = options.skipNonObjects ?? true;
  let documents;
  try {
    documents = parseAllDocuments(text, { uniqueKeys: false, prettyErrors: false });
  } catch (error) {
    return { ok: false, message: (error as Error).message };
  }
  const list = Array.isArray(documents) ? documents : [documents];
  const objects: ManifestObject[] = [];
  const seen = new Set<string>();
  const duplicates: string[] = [];
  const add = (value: unknown, where: string, source?: string): string | undefined => {
    if (value === null || value === undefined) return undefined;
    if (!isRecord(value)) return skip ? undefined : `${where} is not a mapping`;
    const { apiVersion, kind } = value;
    if (typeof apiVersion !== 'string' || typeof kind !== 'string')
      return skip ? undefined : `${where} has no apiVersion or kind`;
    if (/^.*List$/.test(kind) && Array.isArray(value.items)) {
      for (const [index, item] of value.items.entries()) {
        const problem = add(item, `${where} item ${index + 1}`, source);
        if (problem) return problem;
      }
      return undefined;
    }
    const metadata = isRecord(value.metadata) ? value.metadata : {};
    const name =
      typeof metadata.name === 'string'
        ? metadata.name
        : typeof metadata.generateName === 'string'
          ? `${metadata.generateName}*`
          : '';
    if (!name) return `${where} (${kind}) has no metadata.name`;
    const namespace = typeof metadata.namespace === 'string' ? metadata.namespace : '';
    const object: ManifestObject = {
      apiVersion,
      group: groupOf(apiVersion),
      kind,
      namespace,
      name,
      body: value,
      ...(source !== undefined ? { source } : {}),
    };
    const key = identityKey(object);
    if (seen.has(key)) {
      duplicates.push(describeRef(object));
      return undefined;
    }
    seen.add(key);
    objects.push(object);
    return undefined;
  };
  for (const [index, document] of list.entries()) {
    const error = document.errors[0];
    // prettyErrors is off so messages carry no source excerpt (which could hold a secret value).
    if (error)
      return {
        ok: false,
        message: `document ${index + 1}${error.linePos ? `, line ${error.linePos[0].line}` : ''}: ${error.message}`,
      };
    let value: unknown;
    try {
      value = document.toJS({ maxAliasCount });
    } catch (error) {
      return { ok: false, message: `document ${index + 1}: ${(error as Error).message}` };
    }
    const problem = add(value, `document ${index + 1}`, helmSource(document.contents?.commentBefore));
    if (problem) return { ok: false, message: problem };
  }
  return { ok: true, objects, duplicates };
}
