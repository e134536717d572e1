/**
 * `npx tsx bench/openapi-validators.ts`: what the sandbox's OpenAPI recorder
 * (packages/github-sandbox/testing/openapi.ts) spends making its validators, for every operation
 * the simulator serves (its request body and each documented JSON response), in one process:
 *
 * 1. the earlier way: one standalone schema per operation and status, every component it reaches
 *    inlined under `definitions`, `ajv.compile`d on its own
 * 2. `SchemaValidators` without a cache: each component added to one Ajv instance once, by `$ref`
 * 3. `SchemaValidators` on an empty cache directory (a clean checkout's first test process):
 *    compiles as 2, and writes each validator's standalone code
 * 4. `SchemaValidators` on that directory again (every later test process): loads, compiles nothing
 *
 * Prints wall and CPU time of each and the ratio against 1. Converting the description's
 * components (shared by all four, once per process) is done before the clock starts. Then holds
 * each validator of 2, 3 and 4 against 1 on GitHub's own examples of each body and on each
 * example with one top-level key removed or given a value of the wrong type: the errors (place,
 * keyword, message, parameters) must be the same; exits non-zero when any differ.
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { startSimulator } from '@escalator/github-sandbox';
// The module, not the package's `testing` entry: that one loads vitest (`expectGitHubShaped`).
import { convertSchema, SchemaValidators } from '../packages/github-sandbox/testing/openapi.js';

type Json = Record<string, unknown>;
const require = createRequire(import.meta.url);
const spec = require('@octokit/openapi/generated/ghes-3.17.json') as {
  paths: Record<string, Record<string, Json>>;
  components: { responses: Record<string, Json>; examples: Record<string, { value?: unknown }> };
};

interface Case {
  key: string;
  schema: unknown;
  examples: unknown[];
}

/** The JSON schema and GitHub's examples of a request body or response. */
function content(body: Json | undefined): { schema: unknown; examples: unknown[] } | undefined {
  const ref = body?.$ref;
  if (typeof ref === 'string') body = spec.components.responses[ref.split('/').pop() ?? ''];
  const json = (body?.content as Record<string, Json> | undefined)?.['application/json'];
  if (json?.schema === undefined) return undefined;
  const examples = Object.values((json.examples as Record<string, Json> | undefined) ?? {}).flatMap((example) => {
    const name = typeof example.$ref === 'string' ? example.$ref.split('/').pop() : undefined;
    const value = name ? spec.components.examples[name]?.value : example.value;
    return value === undefined ? [] : [value];
  });
  return { schema: json.schema, examples };
}

const sim = await startSimulator();
const cases: Case[] = [];
for (const [template, item] of Object.entries(spec.paths)) {
  for (const [verb, op] of Object.entries(item)) {
    const method = verb.toUpperCase();
    if (!['GET', 'POST', 'PUT', 'PATCH', 'DELETE'].includes(method)) continue;
    if (!sim.serves(method, template.replace(/\{[^}]+\}/g, '1'))) continue;
    const request = content(op.requestBody as Json | undefined);
    if (request) cases.push({ key: `${method} ${template} request`, ...request });
    for (const [status, response] of Object.entries((op.responses as Record<string, Json>) ?? {})) {
      const documented = content(response);
      if (documented) cases.push({ key: `${method} ${template} ${status}`, ...documented });
    }
  }
}
await sim.close();

// Component conversion is shared by every way below; done before any clock starts.
const converted = new Map(cases.map((c) => [c.key, convertSchema(c.schema)]));

/** The earlier way's schema: the root and every component it reaches under `definitions`. */
function inlined(key: string): Json {
  const { root, components } = converted.get(key)!;
  const local = (node: unknown): unknown => {
    if (Array.isArray(node)) return node.map(local);
    if (!node || typeof node !== 'object') return node;
    return Object.fromEntries(
      Object.entries(node).map(([name, value]) => [
        name,
        name === '$ref' && typeof value === 'string' ? `#/definitions/${value.split('/').pop() ?? ''}` : local(value),
      ]),
    );
  };
  const definitions = Object.fromEntries([...components].map(([name, schema]) => [name, local(schema)]));
  return { allOf: [local(root)], definitions };
}
const earlierSchemas = new Map(cases.map((c) => [c.key, inlined(c.key)]));

function measured<T>(work: () => T): { value: T; wallMs: number; cpuMs: number } {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const value = work();
  const used = process.cpuUsage(cpu);
  return { value, wallMs: performance.now() - started, cpuMs: (used.user + used.system) / 1000 };
}

function earlierWay(): Map<string, ValidateFunction> {
  const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
  const ajv = new Ajv({ strict: false, allErrors: true });
  addFormats(ajv);
  for (const name of ['uri-template', 'int64', 'int32', 'repo.nwo', 'binary', 'ssh-key', 'ssh-key fingerprint'])
    ajv.addFormat(name, true);
  return new Map(cases.map((c) => [c.key, ajv.compile(earlierSchemas.get(c.key)!)]));
}

function withValidators(validators: SchemaValidators): Map<string, ValidateFunction> {
  return new Map(cases.map((c) => [c.key, validators.get(c.key, () => c.schema)!]));
}

const cacheDir = mkdtempSync(join(tmpdir(), 'bench-openapi-validators-'));
const load = () => (require('node:fs') as typeof import('node:fs')).readFileSync('/proc/loadavg', 'utf8').trim();
console.log(`${cases.length} validators (request bodies and documented JSON responses of the simulator's operations)`);
console.log(`load average before: ${load()}`);
const earlier = measured(earlierWay);
const shared = new SchemaValidators({ cacheDir: null });
const sharedRun = measured(() => withValidators(shared));
const coldValidators = new SchemaValidators({ cacheDir });
const cold = measured(() => withValidators(coldValidators));
const warmValidators = new SchemaValidators({ cacheDir });
const warm = measured(() => withValidators(warmValidators));
const files = readdirSync(cacheDir).length;
console.log(`load average after: ${load()}`);

const line = (name: string, run: { wallMs: number; cpuMs: number }, note = '') =>
  console.log(
    `${name.padEnd(44)} wall ${run.wallMs.toFixed(0).padStart(6)} ms  cpu ${run.cpuMs.toFixed(0).padStart(6)} ms  ` +
      `ratio (cpu) ${(run.cpuMs / earlier.cpuMs).toFixed(3)}${note}`,
  );
line('1. earlier: standalone schema, ajv.compile', earlier);
line('2. components once, by $ref (no cache)', sharedRun, `  compiled ${shared.counts.compiled}`);
line('3. 2 + empty cache (compile, write)', cold, `  compiled ${coldValidators.counts.compiled}, ${files} files`);
line(
  '4. 2 + warm cache (load)',
  warm,
  `  loaded ${warmValidators.counts.loaded}, compiled ${warmValidators.counts.compiled}`,
);

// Same errors as the earlier way, on GitHub's examples and on broken copies of them.
const errorsOf = (validate: ValidateFunction, body: unknown): string => {
  validate(body);
  return JSON.stringify((validate.errors ?? []).map((e) => [e.instancePath, e.keyword, e.message, e.params] as const));
};
function* samples(example: unknown): Generator<unknown> {
  yield example;
  if (!example || typeof example !== 'object' || Array.isArray(example)) return;
  for (const [key, value] of Object.entries(example)) {
    const { [key]: _removed, ...rest } = example as Json;
    yield rest;
    yield { ...example, [key]: typeof value === 'string' ? 42 : 'planted' };
  }
}
let compared = 0;
let invalid = 0;
const differences: string[] = [];
for (const c of cases) {
  for (const example of c.examples) {
    for (const body of samples(example)) {
      const expected = errorsOf(earlier.value.get(c.key)!, body);
      if (expected !== '[]') invalid += 1;
      for (const [name, run] of [
        ['2', sharedRun],
        ['3', cold],
        ['4', warm],
      ] as const) {
        const actual = errorsOf(run.value.get(c.key)!, body);
        compared += 1;
        if (actual !== expected) differences.push(`${c.key} (${name}): ${actual} ≠ earlier ${expected}`);
      }
    }
  }
}
rmSync(cacheDir, { recursive: true, force: true });
console.log(
  `same errors as the earlier way: ${compared - differences.length}/${compared} checks ` +
    `(${invalid} of the bodies broke the schema)`,
);
for (const difference of differences.slice(0, 20)) console.log(`  differs: ${difference}`);
if (differences.length > 0) process.exit(1);
