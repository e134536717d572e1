import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { Exchange } from '../src/server.js';

/**
 * Checks every exchange the simulator handles against GitHub's OpenAPI description
 * (GHES 3.17, the API the simulator imitates). Schemas are converted from OpenAPI 3.0 to JSON
 * Schema (`nullable`) and compiled lazily, one per operation and status, so it stays fast.
 */

type Json = Record<string, unknown>;
interface Operation {
  method: string;
  template: string;
  regex: RegExp;
  literal: number;
  spec: Json;
}

const require = createRequire(import.meta.url);
const spec = JSON.parse(readFileSync(require.resolve('@octokit/openapi/generated/ghes-3.17.json'), 'utf8')) as Json;
const components = spec.components as {
  schemas: Record<string, Json>;
  responses: Record<string, Json>;
  requestBodies?: Record<string, Json>;
};
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const ajv = new Ajv({ strict: false, allErrors: true });
addFormats(ajv);
for (const name of ['uri-template', 'int64', 'int32', 'repo.nwo', 'binary', 'ssh-key', 'ssh-key fingerprint'])
  ajv.addFormat(name, true);

const operations: Operation[] = Object.entries(spec.paths as Record<string, Record<string, Json>>).flatMap(
  ([template, item]) =>
    Object.entries(item)
      .filter(([method]) => ['get', 'post', 'put', 'patch', 'delete'].includes(method))
      .map(([method, op]) => {
        const parts = template.split(/(\{[^}]+\})/);
        const last = parts.filter((part) => part.startsWith('{')).length;
        let seen = 0;
        const source = parts
          .map((part) => {
            if (!part.startsWith('{')) return part.replace(/[.+?^${}()|[\]\\]/g, '\\$&');
            seen += 1;
            return seen === last && template.endsWith(part) ? '(.*)' : '(.+)';
          })
          .join('');
        return {
          method: method.toUpperCase(),
          template,
          regex: new RegExp(`^${source}$`),
          literal: parts.filter((part) => !part.startsWith('{')).join('').length,
          spec: op,
        };
      }),
);

/**
 * The spec operation for a request path under `/api/v3` (most literal characters wins).
 * `/repositories/{id}/…`, GitHub's undocumented id-based alias of `/repos/{owner}/{repo}/…`
 * (where renamed repositories redirect and pagination links point, as the rename-repository and
 * paginate-issues recordings of @octokit/fixtures show), is judged as the route it aliases.
 */
export function findOperation(method: string, path: string): Operation | undefined {
  path = path.replace(/^\/repositories\/\d+(?=\/|$)/, '/repos/owner/repo');
  // `GET /git/refs` (every ref, the git-refs recording) is matching-refs with an empty prefix.
  if (method === 'GET') path = path.replace(/^(\/repos\/[^/]+\/[^/]+)\/git\/refs\/?$/, '$1/git/matching-refs/');
  return operations
    .filter((op) => op.method === method && op.regex.test(path))
    .sort((a, b) => b.literal - a.literal)[0];
}

const converted = new Map<string, { schema: Json; refs: Set<string> }>();

function component(name: string): { schema: Json; refs: Set<string> } {
  let entry = converted.get(name);
  if (!entry) {
    const refs = new Set<string>();
    entry = { schema: (convert(components.schemas[name], refs) as Json | undefined) ?? {}, refs };
    converted.set(name, entry);
  }
  return entry;
}

/** OpenAPI 3.0 → JSON Schema: `nullable` becomes `anyOf null`, refs point at `definitions`. */
function convert(node: unknown, refs: Set<string>): unknown {
  if (Array.isArray(node)) return node.map((item) => convert(item, refs));
  if (!node || typeof node !== 'object') return node;
  const source = node as Json;
  const out: Json = {};
  for (const [key, value] of Object.entries(source)) {
    if (
      [
        'nullable',
        'example',
        'examples',
        'discriminator',
        'xml',
        'externalDocs',
        'deprecated',
        'readOnly',
        'writeOnly',
      ].includes(key) ||
      key.startsWith('x-')
    )
      continue;
    if (key === '$ref' && typeof value === 'string') {
      const name = value.split('/').pop() ?? '';
      refs.add(name);
      out.$ref = `#/definitions/${name}`;
    } else if (key === 'properties' || key === 'patternProperties') {
      out[key] = Object.fromEntries(
        Object.entries(value as Json).map(([name, schema]) => [name, convert(schema, refs)]),
      );
    } else if (['enum', 'default', 'const', 'required'].includes(key)) {
      out[key] = value;
    } else {
      out[key] = convert(value, refs);
    }
  }
  fixErrata(out);
  return source.nullable === true ? { anyOf: [out, { type: 'null' }] } : out;
}

/**
 * Known mistakes in GitHub's description, corrected so the check stays strict elsewhere:
 * `GET /app/installations` inlines `account` as `allOf [Simple User, Enterprise]`, which no
 * account can satisfy; the `installation` component (and GitHub) say `anyOf`. A 409 of
 * `PUT /contents/{path}` is `oneOf [basic-error, repository-rule-violation-error]`, and every
 * basic error matches both (neither requires a key): GitHub means either, so `anyOf`.
 */
function fixErrata(schema: Json): void {
  const choices = schema.oneOf as Json[] | undefined;
  const refs = choices?.map((choice) => choice.$ref);
  if (
    refs?.length === 2 &&
    refs.includes('#/definitions/basic-error') &&
    refs.includes('#/definitions/repository-rule-violation-error')
  ) {
    schema.anyOf = choices;
    delete schema.oneOf;
  }
  const parts = schema.allOf as Json[] | undefined;
  const titles = parts?.map((part) => part.title);
  if (titles?.length === 2 && titles.includes('Simple User') && titles.includes('Enterprise')) {
    schema.anyOf = parts;
    delete schema.allOf;
  }
}

function standalone(schema: unknown): Json {
  const definitions: Json = {};
  const pending = new Set<string>();
  const root = convert(schema, pending);
  for (const name of pending) {
    if (definitions[name]) continue;
    const { schema: converted, refs } = component(name);
    definitions[name] = converted;
    for (const ref of refs) if (!definitions[ref]) pending.add(ref);
  }
  return { allOf: [root], definitions };
}

const compiled = new Map<string, ValidateFunction | null>();

function validatorFor(key: string, schema: () => unknown): ValidateFunction | null {
  if (!compiled.has(key)) {
    const source = schema();
    compiled.set(key, source === undefined ? null : ajv.compile(standalone(source)));
  }
  return compiled.get(key) ?? null;
}

function jsonSchemaOf(body: Json | undefined): unknown {
  const content = body?.content as Record<string, { schema?: unknown }> | undefined;
  return content?.['application/json']?.schema;
}

function resolveResponse(response: Json | undefined): Json | undefined {
  const ref = response?.$ref;
  return typeof ref === 'string' ? components.responses[ref.split('/').pop() ?? ''] : response;
}

/** Collects every way the simulator strays from GitHub's description. */
export class OpenApiRecorder {
  readonly failures: string[] = [];
  readonly operations = new Set<string>();

  check(exchange: Exchange): void {
    if (exchange.surface !== 'api') return;
    const where = `${exchange.method} ${exchange.path} → ${exchange.status}`;
    const op = findOperation(exchange.method, exchange.path);
    if (!op) {
      this.failures.push(`${where}: no such operation in GitHub's OpenAPI description`);
      return;
    }
    this.operations.add(`${op.method} ${op.template}`);
    const requestBody = op.spec.requestBody as Json | undefined;
    if (exchange.requestBody !== undefined && exchange.status < 400) {
      const validate = validatorFor(`${op.method} ${op.template} request`, () => jsonSchemaOf(requestBody));
      if (validate && !validate(exchange.requestBody)) this.fail(where, 'request body', validate);
    }
    const responses = op.spec.responses as Record<string, Json>;
    const documented = resolveResponse(responses[String(exchange.status)]);
    // A 304 answers a conditional GET on any route, documented or not
    // (https://docs.github.com/en/rest/using-the-rest-api/best-practices-for-using-the-rest-api#use-conditional-requests-if-appropriate);
    // it never has a body.
    if (exchange.status === 304 && exchange.method === 'GET') {
      if (exchange.responseBody !== undefined) this.failures.push(`${where}: a 304 carries no body`);
      return;
    }
    if (!documented && exchange.status < 400) {
      this.failures.push(`${where}: status ${exchange.status} is not documented for ${op.template}`);
      return;
    }
    if (exchange.responseBody === undefined) return;
    const schema = jsonSchemaOf(documented);
    const key = schema ? `${op.method} ${op.template} ${exchange.status}` : 'basic-error';
    const validate = schema
      ? validatorFor(key, () => schema)
      : exchange.status >= 400
        ? validatorFor(key, () => ({ $ref: '#/components/schemas/basic-error' }))
        : null;
    if (!validate) {
      this.failures.push(`${where}: answered a body where GitHub documents none`);
    } else if (!validate(exchange.responseBody)) {
      this.fail(where, 'response body', validate, exchange.responseBody);
    }
  }

  private fail(where: string, what: string, validate: ValidateFunction, body?: unknown): void {
    const errors = (validate.errors ?? [])
      .filter((e) => !emptyDeploymentUrl(where, e, body))
      .slice(0, 12)
      .map((e) => `${e.instancePath || '/'} ${e.message ?? ''} ${JSON.stringify(e.params)}`);
    if (errors.length > 0) this.failures.push(`${where}: ${what} does not match GitHub's schema: ${errors.join('; ')}`);
  }
}

/**
 * The one place GitHub's description is stricter than GitHub: a deployment status given no URL
 * answers `""` for `target_url`, `log_url` and `environment_url` (the request body documents `""`
 * as their default), which the response schema types as `format: uri`.
 */
function emptyDeploymentUrl(where: string, error: { keyword: string; instancePath: string }, body: unknown): boolean {
  if (error.keyword !== 'format' || !/\/deployments\/\d+\/statuses/.test(where)) return false;
  if (!/\/(target_url|log_url|environment_url)$/.test(error.instancePath)) return false;
  let value: unknown = body;
  for (const part of error.instancePath.split('/').slice(1))
    value = value && typeof value === 'object' ? (value as Record<string, unknown>)[part] : undefined;
  return value === '';
}
