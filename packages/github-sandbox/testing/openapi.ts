import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import standaloneModule from 'ajv/dist/standalone/index.js';
import type { Exchange } from '../src/server.js';

/**
 * Checks every exchange the simulator handles against GitHub's OpenAPI description
 * (GHES 3.17, the API the simulator imitates). Schemas are converted from OpenAPI 3.0 to JSON
 * Schema (`nullable`) and compiled lazily, one per operation and status. Each component
 * (repository, pull-request, …) is added to one Ajv instance once and referred to by `$ref`, so
 * it compiles once per process however many operations use it; and each compiled validator is
 * kept as Ajv standalone code under `.cache/openapi-validators/`, named by a hash of the exact
 * schema it checks (the operation's, and every component it reaches, as converted below) and
 * of Ajv's version and options, so the next test process loads it instead of compiling it again.
 * A changed description, conversion or errata fix is a different schema, hence a different file.
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
const standaloneCode = standaloneModule as unknown as typeof standaloneModule.default;
const AJV_OPTIONS = { strict: false, allErrors: true } as const;
/** Formats GitHub's description uses that Ajv and ajv-formats do not know: accepted as any string. */
const LOOSE_FORMATS = ['uri-template', 'int64', 'int32', 'repo.nwo', 'binary', 'ssh-key', 'ssh-key fingerprint'];
/** What else the generated code depends on; part of every cache file's name. */
const CODE_IDENTITY = JSON.stringify({
  cacheFormat: 1,
  ajv: (require('ajv/package.json') as { version: string }).version,
  ajvFormats: (require('ajv-formats/package.json') as { version: string }).version,
  options: AJV_OPTIONS,
  looseFormats: LOOSE_FORMATS,
});
/** The repository's `.cache/` (gitignored; a clean checkout starts without it). */
const DEFAULT_CACHE_DIR = fileURLToPath(new URL('../../../.cache/openapi-validators/', import.meta.url));

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

/** Where a converted component is added in an Ajv instance; `$ref`s point here. */
const COMPONENTS = 'https://ghes-3.17.openapi.invalid/components/schemas/';
const refTo = (name: string) => `${COMPONENTS}${name}`;

interface Converted {
  schema: Json;
  refs: Set<string>;
  /** sha256 of the converted schema's JSON. */
  digest: string;
}

const converted = new Map<string, Converted>();

function component(name: string): Converted {
  let entry = converted.get(name);
  if (!entry) {
    const refs = new Set<string>();
    const schema = (convert(components.schemas[name], refs) as Json | undefined) ?? {};
    entry = { schema, refs, digest: sha256(JSON.stringify(schema)) };
    converted.set(name, entry);
  }
  return entry;
}

function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

/** OpenAPI 3.0 → JSON Schema: `nullable` becomes `anyOf null`, refs point at the components. */
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
      out.$ref = refTo(name);
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
    refs.includes(refTo('basic-error')) &&
    refs.includes(refTo('repository-rule-violation-error'))
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

/**
 * An OpenAPI schema as JSON Schema: the converted root, whose `$ref`s name components by URI
 * (`https://ghes-3.17.openapi.invalid/components/schemas/<name>`), and every component it
 * reaches, converted, by name.
 */
export function convertSchema(source: unknown): { root: Json; components: Map<string, Json> } {
  const refs = new Set<string>();
  const root = convert(source, refs) as Json;
  const reached = new Map<string, Json>();
  for (const name of closure(refs)) reached.set(name, component(name).schema);
  return { root, components: reached };
}

/** Names of the components `refs` reach, themselves included. */
function closure(refs: Iterable<string>): Set<string> {
  const reached = new Set<string>();
  const pending = [...refs];
  for (let name = pending.pop(); name !== undefined; name = pending.pop()) {
    if (reached.has(name)) continue;
    reached.add(name);
    pending.push(...component(name).refs);
  }
  return reached;
}

/**
 * Validators by key (operation, and `request` or status), compiled once per process and, given a
 * cache directory, once per machine: `cacheDir: null` compiles in every process.
 */
export class SchemaValidators {
  readonly #cacheDir: string | null;
  readonly #validators = new Map<string, ValidateFunction | null>();
  readonly #byDigest = new Map<string, ValidateFunction>();
  readonly #added = new Set<string>();
  #ajv: Ajv | undefined;
  /** How many validators this instance compiled, and how many it loaded from the cache. */
  readonly counts = { compiled: 0, loaded: 0 };

  constructor(options: { cacheDir?: string | null } = {}) {
    this.#cacheDir = options.cacheDir === undefined ? DEFAULT_CACHE_DIR : options.cacheDir;
  }

  /** The validator of `key`, whose OpenAPI schema `schema()` returns (`undefined`: none, `null` here). */
  get(key: string, schema: () => unknown): ValidateFunction | null {
    if (!this.#validators.has(key)) {
      const source = schema();
      this.#validators.set(key, source === undefined ? null : this.#validator(source));
    }
    return this.#validators.get(key) ?? null;
  }

  #validator(source: unknown): ValidateFunction {
    const refs = new Set<string>();
    const root = convert(source, refs) as Json;
    const reached = [...closure(refs)].sort();
    // Names the exact schema checked; many operations share one (a 404's basic-error).
    const digest = sha256(JSON.stringify([CODE_IDENTITY, root, reached.map((name) => [name, component(name).digest])]));
    let validate = this.#byDigest.get(digest);
    if (validate) return validate;
    const file = this.#cacheDir === null ? undefined : join(this.#cacheDir, `${digest}.ajv`);
    validate = file === undefined ? undefined : load(file);
    if (validate) {
      this.counts.loaded += 1;
    } else {
      validate = this.#compile(root, reached);
      if (file !== undefined) save(file, standaloneCode(this.#instance(), validate));
    }
    this.#byDigest.set(digest, validate);
    return validate;
  }

  #compile(root: Json, reached: string[]): ValidateFunction {
    const ajv = this.#instance();
    for (const name of reached) {
      if (this.#added.has(name)) continue;
      this.#added.add(name);
      ajv.addSchema(component(name).schema, refTo(name));
    }
    this.counts.compiled += 1;
    return ajv.compile(root);
  }

  #instance(): Ajv {
    if (!this.#ajv) {
      // `code.source` keeps each validator's code, for the cache.
      this.#ajv = new Ajv({ ...AJV_OPTIONS, code: { source: this.#cacheDir !== null } });
      addFormats(this.#ajv);
      for (const name of LOOSE_FORMATS) this.#ajv.addFormat(name, true);
    }
    return this.#ajv;
  }
}

/** A cached validator, or undefined when there is none (or it cannot be read). */
function load(file: string): ValidateFunction | undefined {
  let code: string;
  try {
    code = readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
  try {
    // Ajv's standalone code is a CommonJS module; its `require`s (Ajv's runtime, ajv-formats'
    // formats) resolve from this package.
    const module = { exports: {} as unknown };
    new Function('require', 'module', 'exports', code)(require, module, module.exports);
    return typeof module.exports === 'function' ? (module.exports as ValidateFunction) : undefined;
  } catch {
    return undefined;
  }
}

/** Writes atomically (a temporary file renamed), so a concurrent test process reads all or nothing. */
function save(file: string, code: string): void {
  const temporary = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  try {
    mkdirSync(join(file, '..'), { recursive: true });
    writeFileSync(temporary, code);
    renameSync(temporary, file);
  } catch {
    // A cache that cannot be written only costs the next process a compile.
    rmSync(temporary, { force: true });
  }
}

/** The validators every recorder shares unless given its own: one compile per process at most. */
const sharedValidators = new SchemaValidators();

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

  readonly #validators: SchemaValidators;

  /** `validators`: where the schemas' validators come from (by default one set per process, cached on disk). */
  constructor(validators: SchemaValidators = sharedValidators) {
    this.#validators = validators;
  }

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
      const validate = this.#validators.get(`${op.method} ${op.template} request`, () => jsonSchemaOf(requestBody));
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
      ? this.#validators.get(key, () => schema)
      : exchange.status >= 400
        ? this.#validators.get(key, () => ({ $ref: '#/components/schemas/basic-error' }))
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
