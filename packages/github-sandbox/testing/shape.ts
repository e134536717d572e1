import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/**
 * Compares a simulator answer with a recorded GitHub answer by shape: the same keys, recursively,
 * with the same JSON types, and strings of the same kind (a date stays a date, a URL a URL, a
 * commit SHA a SHA). Values that differ by nature between two servers (ids, URLs, dates, SHAs,
 * names) are not compared. A key the recording has and the simulator lacks is a difference; a key
 * the simulator adds is one too, unless GitHub's OpenAPI description documents it at that place.
 */

type Json = Record<string, unknown>;

/** The kind of a JSON value, strings classified by what they hold. */
export function kindOf(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'string') {
    if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/.test(value)) return 'date';
    if (/^[0-9a-f]{40}$/.test(value)) return 'sha';
    if (/^https?:\/\//.test(value)) return 'url';
    return 'string';
  }
  return typeof value;
}

/** Where a documented schema says a key may appear: decides whether an extra key is allowed. */
export type Documented = (path: string[], key: string) => boolean;

/**
 * Differences between `recorded` and `actual`, as `path: what` lines. `onPair` sees every pair
 * of scalar values at the same place (replays learn the simulator's ids and SHAs from it).
 */
export function compareShapes(
  recorded: unknown,
  actual: unknown,
  documented: Documented,
  onPair: (recorded: unknown, actual: unknown, key: string) => void = () => undefined,
): string[] {
  const differences: string[] = [];
  const walk = (a: unknown, b: unknown, path: string[]) => {
    const where = `/${path.join('/')}`;
    const kindA = kindOf(a);
    const kindB = kindOf(b);
    if (kindA !== kindB) {
      differences.push(`${where}: GitHub sent ${kindA}, the simulator ${kindB}`);
      return;
    }
    if (kindA === 'array') {
      const left = a as unknown[];
      const right = b as unknown[];
      if (left.length !== right.length)
        differences.push(`${where}: GitHub sent ${left.length} items, the simulator ${right.length}`);
      for (let i = 0; i < Math.min(left.length, right.length); i += 1) walk(left[i], right[i], [...path, '[]']);
      return;
    }
    if (kindA === 'object') {
      const left = a as Json;
      const right = b as Json;
      for (const key of Object.keys(left)) {
        if (!(key in right)) differences.push(`${where}: missing key "${key}"`);
        else walk(left[key], right[key], [...path, key]);
      }
      for (const key of Object.keys(right)) {
        if (!(key in left) && !documented(path, key))
          differences.push(`${where}: key "${key}" that GitHub neither sent nor documents`);
      }
      return;
    }
    onPair(a, b, path.at(-1) ?? '');
  };
  walk(recorded, actual, []);
  return differences;
}

/** GitHub's OpenAPI descriptions (api.github.com and GHES 3.17), for documented extra keys. */
export class OpenApiDescriptions {
  readonly #specs: Json[];

  constructor(names: string[] = ['api.github.com', 'ghes-3.17']) {
    const require = createRequire(import.meta.url);
    this.#specs = names.map(
      (name) => JSON.parse(readFileSync(require.resolve(`@octokit/openapi/generated/${name}.json`), 'utf8')) as Json,
    );
  }

  /** The response schemas every description documents for an operation and status. */
  responseSchemas(method: string, path: string, status: number): { spec: Json; schema: unknown }[] {
    return this.#specs.flatMap((spec) => {
      const op = findOperation(spec, method, path);
      const responses = op?.responses as Record<string, Json> | undefined;
      let response = responses?.[String(status)];
      const ref = response?.$ref;
      if (typeof ref === 'string')
        response = ((spec.components as Json).responses as Record<string, Json>)[ref.split('/').pop() ?? ''];
      const content = response?.content as Record<string, { schema?: unknown }> | undefined;
      const schema = content?.['application/json']?.schema;
      return schema === undefined ? [] : [{ spec, schema }];
    });
  }

  /** Whether `key` is a documented property at `path` ('[]' steps into array items). */
  documents(method: string, path: string, status: number): Documented {
    const roots = this.responseSchemas(method, path, status);
    return (at, key) =>
      roots.some(({ spec, schema }) => {
        let nodes = alternatives(spec, schema);
        for (const step of at) nodes = nodes.flatMap((node) => alternatives(spec, childOf(node, step)));
        return nodes.some((node) => {
          const properties = node.properties as Json | undefined;
          return (properties !== undefined && key in properties) || isOpenObject(node);
        });
      });
  }
}

function isOpenObject(node: Json): boolean {
  const extra = node.additionalProperties;
  return extra !== undefined && extra !== false;
}

function childOf(node: Json, step: string): unknown {
  if (step === '[]') return node.items;
  const properties = node.properties as Json | undefined;
  if (properties && step in properties) return properties[step];
  return isOpenObject(node) && typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
}

/** A schema with `$ref`s followed and `allOf`/`anyOf`/`oneOf` spread into alternatives. */
function alternatives(spec: Json, schema: unknown, depth = 0): Json[] {
  if (!schema || typeof schema !== 'object' || depth > 20) return [];
  let node = schema as Json;
  if (typeof node.$ref === 'string') {
    const name = node.$ref.split('/').pop() ?? '';
    node = ((spec.components as Json).schemas as Record<string, Json>)[name] ?? {};
  }
  const parts = ['allOf', 'anyOf', 'oneOf'].flatMap((key) => (node[key] as unknown[] | undefined) ?? []);
  return [node, ...parts.flatMap((part) => alternatives(spec, part, depth + 1))];
}

const operationCache = new WeakMap<Json, { method: string; regex: RegExp; literal: number; op: Json }[]>();

/** The operation of a description for a method and path (most literal characters wins). */
function findOperation(spec: Json, method: string, path: string): Json | undefined {
  // `/repositories/{id}/…` is GitHub's undocumented id-based alias of `/repos/{owner}/{repo}/…`.
  path = path.replace(/^\/repositories\/\d+(?=\/|$)/, '/repos/owner/repo');
  // `GET /git/refs` (every ref, the git-refs recording) is matching-refs with an empty prefix.
  if (method.toUpperCase() === 'GET')
    path = path.replace(/^(\/repos\/[^/]+\/[^/]+)\/git\/refs\/?$/, '$1/git/matching-refs/');
  let operations = operationCache.get(spec);
  if (!operations) {
    operations = Object.entries(spec.paths as Record<string, Record<string, Json>>).flatMap(([template, item]) =>
      Object.entries(item)
        .filter(([verb]) => ['get', 'post', 'put', 'patch', 'delete'].includes(verb))
        .map(([verb, op]) => {
          const parts = template.split(/(\{[^}]+\})/);
          const source = parts
            .map((part) => (part.startsWith('{') ? '([^/]+|.+)' : part.replace(/[.+?^${}()|[\]\\]/g, '\\$&')))
            .join('');
          return {
            method: verb.toUpperCase(),
            regex: new RegExp(`^${source}$`),
            literal: parts.filter((part) => !part.startsWith('{')).join('').length,
            op,
          };
        }),
    );
    operationCache.set(spec, operations);
  }
  return operations
    .filter((entry) => entry.method === method.toUpperCase() && entry.regex.test(path))
    .sort((a, b) => b.literal - a.literal)[0]?.op;
}
