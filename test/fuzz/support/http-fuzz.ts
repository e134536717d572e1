/**
 * The HTTP fuzz: generated requests against every endpoint of a running web role, with the
 * invariants each answer must keep. Shared by test/fuzz/http.test.ts and bench/fuzz-report.ts,
 * so it uses no test runner: a broken invariant is a thrown Error naming the case.
 *
 * Invariants, per case:
 * - an answer arrives (the connection is not dropped without one), and it is not 5xx
 * - every 4xx is JSON with an `error` string that says why (HEAD answers carry no body)
 * - a request without valid credentials for an authenticated route is never answered 2xx
 * - a 4xx leaves Redis as it was: no job in any queue, no key under the prefix
 */
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import fc from 'fast-check';
import { agentNames, agentTable } from '../../../src/events/agents/index.js';
import { agentKey } from '../../../src/intake/agent-routes.js';
import { registries } from '../../../src/events/index.js';
import { AGENT_MAX_BODY_BYTES } from '../../../src/intake/agent-routes.js';
import { fixtureBytes, loadRegistryFixtures } from '../../support/registry-fixtures.js';
import { sendRaw, type RawOutcome, type RawRequest } from './raw-http.js';
import { githubSignature, sourcesBy, type FuzzStack, type Secrets } from './stack.js';

/** One generated request and what the fuzz knows about it. */
export interface FuzzCase {
  /** Counting bucket: `github-webhook`, `registry/harbor`, `ci`, `admin/relay`, `healthz`, … */
  endpoint: string;
  request: RawRequest;
  /** For authenticated routes: whether the case carries valid credentials. Public routes: undefined. */
  authentic?: boolean;
  /** How the case was built (body kind, auth variant, framing), for failure messages. */
  shape: string;
  /** What the body was made from ({@link BodyKind}, or `json` for the admin routes). */
  bodyKind?: string;
}

/**
 * Bodies no route can accept whatever else the request gets right: with Redis down they must
 * still be refused for what they are (400 or 413), never answered 503 as if they could be queued.
 */
const neverAcceptable: ReadonlySet<string> = new Set<BodyKind>([
  'random-bytes',
  'empty',
  'oversized',
  'deep-array',
  'deep-object',
]);

/** Cases tried, by endpoint and outcome (the status code, or `no-answer`). */
export class Tally {
  readonly counts = new Map<string, Map<string, number>>();

  add(endpoint: string, outcome: string): void {
    const row = this.counts.get(endpoint) ?? new Map<string, number>();
    row.set(outcome, (row.get(outcome) ?? 0) + 1);
    this.counts.set(endpoint, row);
  }

  total(endpoint?: string): number {
    const rows =
      endpoint === undefined ? [...this.counts.values()] : [this.counts.get(endpoint) ?? new Map<string, number>()];
    return rows.reduce((sum, row) => sum + [...row.values()].reduce((a, b) => a + b, 0), 0);
  }

  /** A fixed-width table: endpoint, total, then `status×count` for each outcome. */
  table(): string {
    const lines = [...this.counts.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([endpoint, row]) => {
        const outcomes = [...row.entries()]
          .sort(([a], [b]) => a.localeCompare(b))
          .map(([outcome, n]) => `${outcome}×${n}`)
          .join('  ');
        return `${endpoint.padEnd(26)} ${String(this.total(endpoint)).padStart(5)}  ${outcomes}`;
      });
    return [
      `${'endpoint'.padEnd(26)} ${'cases'.padStart(5)}  outcomes (status×count)`,
      ...lines,
      `${'total'.padEnd(26)} ${String(this.total()).padStart(5)}`,
    ].join('\n');
  }

  toJSON(): Record<string, Record<string, number>> {
    return Object.fromEntries([...this.counts.entries()].map(([endpoint, row]) => [endpoint, Object.fromEntries(row)]));
  }
}

/**
 * How the web role is expected to behave: `up` with Redis reachable; `redis-down` when its
 * producer points at a dead port, where a request that passes authentication may be answered
 * 503 (with Retry-After), and nothing else changes.
 */
export type FuzzMode = 'up' | 'redis-down';

/** What broke, for one case (empty: every invariant held). */
export function checkAnswer(
  fuzzCase: FuzzCase,
  outcome: RawOutcome,
  redis: { jobs: number; keys: number },
  mode: FuzzMode = 'up',
): string[] {
  if (outcome.kind !== 'response') {
    // A Content-Length that lies low makes the rest of the body a second, garbage request on the
    // same connection; Node then closes it, and a request already answered with
    // `100 Continue` gets no final answer. The sender broke the framing; nothing else may.
    if (fuzzCase.shape.includes('lying-length') && outcome.interim > 0) return [];
    return [`no answer: ${outcome.detail}`];
  }
  const { status, headers, body } = outcome.response;
  const problems: string[] = [];
  const unavailable =
    mode === 'redis-down' &&
    status === 503 &&
    fuzzCase.authentic === true &&
    !neverAcceptable.has(fuzzCase.bodyKind ?? '');
  if (unavailable && headers['retry-after'] === undefined) problems.push('503 without Retry-After');
  if (!(status >= 200 && status < 500) && !unavailable) problems.push(`answered ${status}`);
  if (fuzzCase.authentic === false && status < 300)
    problems.push(`answered ${status} to a request without valid credentials`);
  if (status >= 400 && fuzzCase.request.method.toUpperCase() !== 'HEAD') {
    if (!/^application\/json/.test(headers['content-type'] ?? ''))
      problems.push(`${status} with content type ${headers['content-type'] ?? '(none)'}`);
    try {
      const parsed = JSON.parse(body) as { error?: unknown };
      if (typeof parsed.error !== 'string' || parsed.error.length < 10)
        problems.push(`${status} whose body says no reason: ${body.slice(0, 200)}`);
    } catch {
      problems.push(`${status} whose body is not JSON: ${JSON.stringify(body.slice(0, 200))}`);
    }
  }
  if (status >= 400 && (redis.jobs !== 0 || redis.keys !== 0))
    problems.push(`${status}, yet Redis changed: ${redis.jobs} jobs and ${redis.keys} keys more`);
  return problems;
}

/**
 * What Redis holds under the stack's prefix, counted after each case: the count after one case is
 * the baseline of the next (cases run one at a time, and the web role runs no worker).
 */
export class RedisCounts {
  private last: { jobs: number; keys: number } | undefined;
  constructor(private readonly stack: FuzzStack) {}

  /** Jobs and keys added since the previous call (the first call counts from just before it). */
  async delta(): Promise<{ jobs: number; keys: number }> {
    const now = { jobs: await this.stack.jobCount(), keys: await this.stack.keyCount() };
    const before = this.last ?? now;
    this.last = now;
    return { jobs: now.jobs - before.jobs, keys: now.keys - before.keys };
  }

  /** Count from now on (call before a case when something else may have written since). */
  async reset(): Promise<void> {
    this.last = undefined;
    await this.delta();
  }
}

/**
 * Send one case, check it, count it. Returns the problems (empty when every invariant held).
 * With Redis down there is nothing to count in it: the producer cannot reach it either.
 */
export async function runCase(
  stack: FuzzStack,
  fuzzCase: FuzzCase,
  tally: Tally,
  mode: FuzzMode = 'up',
  counts?: RedisCounts,
): Promise<string[]> {
  const counted = mode === 'up';
  const counter = counts ?? new RedisCounts(stack);
  if (counted && !counts) await counter.reset();
  const outcome = await sendRaw(stack.url, fuzzCase.request);
  const delta = counted ? await counter.delta() : { jobs: 0, keys: 0 };
  tally.add(
    mode === 'up' ? fuzzCase.endpoint : `${fuzzCase.endpoint} (redis down)`,
    outcome.kind === 'response'
      ? String(outcome.response.status)
      : outcome.interim > 0
        ? 'closed-after-100'
        : 'no-answer',
  );
  return checkAnswer(fuzzCase, outcome, delta, mode);
}

/** Describe a failing case compactly (the body is cut; its length is kept). */
export function describeCase(fuzzCase: FuzzCase, problems: string[]): string {
  const { request } = fuzzCase;
  const head = request.rawHead
    ? request.rawHead.toString('latin1').slice(0, 300)
    : `${request.method} ${request.path.slice(0, 200)} ${JSON.stringify(request.headers.map(([n, v]) => [n, v.slice(0, 80)]))}`;
  return `${fuzzCase.endpoint} [${fuzzCase.shape}] ${head} body=${request.body?.length ?? 0}B ${request.framing}: ${problems.join('; ')}`;
}

/** Run `numRuns` generated cases through fast-check; the first broken invariant fails with the shrunk case. */
export async function fuzzEndpoint(
  stack: FuzzStack,
  arbitrary: fc.Arbitrary<FuzzCase>,
  numRuns: number,
  tally: Tally,
  options: { mode?: FuzzMode; seed?: number } = {},
): Promise<void> {
  const { mode = 'up', seed } = options;
  const counts = new RedisCounts(stack);
  if (mode === 'up') await counts.reset();
  await fc.assert(
    fc.asyncProperty(arbitrary, async (fuzzCase) => {
      const problems = await runCase(stack, fuzzCase, tally, mode, counts);
      if (problems.length > 0) throw new Error(describeCase(fuzzCase, problems));
    }),
    { numRuns, endOnFailure: false, ...(seed !== undefined ? { seed } : {}) },
  );
}

// ── Bodies ───────────────────────────────────────────────────────────────────────────────────

const require = createRequire(import.meta.url);

/**
 * Real payloads per intake source: every registry of the table (src/events/registries/index.ts)
 * with the files its fixture folder's cases.ts names for the fuzzers, then the CI API.
 */
export const registryFixtures: Record<string, { files: Buffer[]; contentType: string }> = {
  ...Object.fromEntries(
    (await loadRegistryFixtures()).map(({ source, fixtures }) => [
      source,
      {
        files: fixtures.fuzz.files.map((file) => fixtureBytes(`${source}/${file}`)),
        contentType: fixtures.fuzz.contentType,
      },
    ]),
  ),
  ci: {
    files: [
      Buffer.from('{"image":"ghcr.io/example/hello:1.2.3"}'),
      Buffer.from(
        JSON.stringify({ repository: 'ghcr.io/example/hello', tag: '2.0.0', digest: `sha256:${'a'.repeat(64)}` }),
      ),
    ],
    contentType: 'application/json',
  },
};

/**
 * Real bodies per agent of the table (src/events/agents/index.ts), from test/fixtures/agents
 * (its README cites each one's source).
 */
export const agentFixtures: Record<string, Buffer[]> = {
  flux: [
    'flux-kustomization-succeeded.json',
    'flux-kustomization-health-failed.json',
    'flux-validation-failed-legacy.json',
    'flux-helmrelease-upgraded.json',
  ].map((file) => readFileSync(new URL(`../../fixtures/agents/${file}`, import.meta.url))),
  argocd: ['argocd-deployed.json', 'argocd-health-degraded.json', 'argocd-sync-failed.json'].map((file) =>
    readFileSync(new URL(`../../fixtures/agents/${file}`, import.meta.url)),
  ),
};

/**
 * Where a real payload of `source` (a registry of the table, or `ci`) is accepted, and the bearer
 * token that goes with it: the path token is in the path, Google's OIDC token for `google-oidc`.
 */
export function intakeTarget(source: string, secrets: Secrets): { endpoint: string; path: string; token: string } {
  if (source === 'ci') return { endpoint: 'ci', path: '/api/v1/images', token: secrets.ciToken };
  const auth = registries.find((registry) => registry.source === source)?.auth;
  if (auth === undefined) throw new Error(`${source} is not a registry of src/events/registries/index.ts`);
  return {
    endpoint: `registry/${source}`,
    path: auth === 'path-token' ? `/registry/${source}/${secrets.pathToken(source)}` : `/registry/${source}`,
    token: auth === 'google-oidc' ? secrets.garToken() : secrets.registryToken,
  };
}

interface WebhookExample {
  name: string;
  examples: Array<Record<string, unknown>>;
}
const webhookExamples = JSON.parse(
  readFileSync(require.resolve('@octokit/webhooks-examples'), 'utf8'),
) as WebhookExample[];

/** Real GitHub deliveries (from @octokit/webhooks-examples), one per event the app handles, and a few it ignores. */
export const githubDeliveries: Array<{ event: string; body: Buffer }> = [
  ['ping', undefined],
  ['push', undefined],
  ['pull_request', 'closed'],
  ['issue_comment', 'created'],
  ['package', 'published'],
  ['installation', 'created'],
  ['installation_repositories', 'added'],
  ['status', undefined],
  ['check_run', 'completed'],
  ['deployment_status', undefined],
  ['star', 'created'],
].map(([event, action]) => {
  const examples = webhookExamples.find((entry) => entry.name === event)?.examples ?? [];
  let example = examples.find((payload) => action === undefined || payload.action === action) ?? examples[0];
  if (!example) throw new Error(`@octokit/webhooks-examples has no ${event} example`);
  if (event === 'push') {
    // A push to the default branch that changes a file: it is indexed and relayed.
    const repository = example.repository as { default_branch: string };
    const commit = {
      id: 'c'.repeat(40),
      message: 'Bump',
      added: [],
      removed: [],
      modified: ['apps/hello/overlays/dev/kustomization.yaml'],
    };
    example = {
      ...example,
      ref: `refs/heads/${repository.default_branch}`,
      commits: [commit],
      head_commit: commit,
      size: 1,
      installation: { id: 1 },
    };
  }
  return { event: event as string, body: Buffer.from(JSON.stringify(example)) };
});

/** Strings that break naive code: huge, control characters, markup, paths, prototype names. */
const oddStrings = fc.constantFrom(
  '',
  ' ',
  '\u0000',
  '\uFFFD',
  '\uD800',
  '💥'.repeat(50),
  'a'.repeat(70_000),
  '../../etc/passwd',
  '<script>alert(1)</script>',
  '${jndi:ldap://x}',
  '{{ .Values }}',
  '__proto__',
  'constructor',
  'toString',
  'sha256:',
  `sha256:${'a'.repeat(64)}`,
  'ghcr.io/example/hello:1.2.3',
  'UPPER/Case:Tag',
  '-1',
  '1e309',
  '\r\n\r\nHTTP/1.1 200 OK',
);
const oddValues: fc.Arbitrary<unknown> = fc.oneof(
  fc.jsonValue({ maxDepth: 3 }),
  oddStrings,
  fc.constantFrom(null, true, 0, -1, 1e308, [], {}, [[[]]], { a: { b: { c: null } } }),
);

/** JSON text nested `depth` levels: `[[[…]]]` or `{"a":{"a":…}}`. */
export function deepJson(depth: number, kind: 'array' | 'object'): string {
  return kind === 'array'
    ? `${'['.repeat(depth)}${']'.repeat(depth)}`
    : `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
}

/** Every path to a value inside a JSON document (objects and arrays), for targeted mutations. */
function pathsOf(
  value: unknown,
  path: Array<string | number> = [],
  out: Array<Array<string | number>> = [],
): Array<Array<string | number>> {
  out.push(path);
  if (Array.isArray(value)) value.forEach((item, i) => pathsOf(item, [...path, i], out));
  else if (typeof value === 'object' && value !== null)
    for (const [key, item] of Object.entries(value)) pathsOf(item, [...path, key], out);
  return out;
}

function setAt(root: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy = structuredClone(root) as Record<string | number, unknown>;
  let node = copy;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  node[path[path.length - 1] as string | number] = replacement;
  return copy;
}

/** Each fixture parsed once, with the paths of its values: setAt copies before it changes anything. */
const parsed = new WeakMap<Buffer, { value: unknown; paths: Array<Array<string | number>> }>();

/** Replace one value of a document, chosen by index, with `replacement` (which may be raw JSON text). */
function mutate(document: Buffer, pick: number, replacement: unknown, raw?: string): Buffer {
  let entry = parsed.get(document);
  if (!entry) {
    const value = JSON.parse(document.toString('utf8')) as unknown;
    entry = { value, paths: pathsOf(value) };
    parsed.set(document, entry);
  }
  const { value, paths } = entry;
  const path = paths[pick % paths.length] as Array<string | number>;
  const placeholder = '\u0000fuzz-raw\u0000';
  const marker = JSON.stringify(placeholder);
  const text = JSON.stringify(setAt(value, path, raw === undefined ? replacement : placeholder));
  return Buffer.from(raw === undefined ? text : text.replace(marker, raw));
}

export type BodyKind =
  | 'fixture'
  | 'truncated'
  | 'random-bytes'
  | 'json-value'
  | 'wrong-type'
  | 'huge-string'
  | 'deep-array'
  | 'deep-object'
  | 'deep-inside'
  | 'empty'
  | 'invalid-utf8'
  | 'bom'
  | 'prototype-keys'
  | 'duplicate-keys'
  | 'oversized';

/**
 * Bodies built from real payloads and from nothing: random bytes, truncated JSON, wrong types at
 * any depth, huge strings, 10,000-level nesting, invalid UTF-8, a BOM, prototype keys, duplicate
 * keys, and bodies over `cap`.
 */
export function bodies(
  files: Buffer[],
  cap: number,
  options: { hugeLength: number; oversized?: boolean },
): fc.Arbitrary<{ kind: BodyKind; body: Buffer }> {
  const file = fc.constantFrom(...files);
  const tag = (kind: BodyKind) => (body: Buffer) => ({ kind, body });
  type Weighted = { weight: number; arbitrary: fc.Arbitrary<{ kind: BodyKind; body: Buffer }> };
  const choices: Weighted[] = [
    { weight: 3, arbitrary: file.map(tag('fixture')) },
    {
      weight: 2,
      arbitrary: fc
        .tuple(file, fc.nat())
        .map(([f, n]) => ({ kind: 'truncated' as const, body: f.subarray(0, n % Math.max(1, f.length)) })),
    },
    {
      weight: 2,
      arbitrary: fc
        .uint8Array({ maxLength: 4096 })
        .map((bytes) => ({ kind: 'random-bytes' as const, body: Buffer.from(bytes) })),
    },
    {
      weight: 2,
      arbitrary: fc
        .jsonValue({ maxDepth: 5 })
        .map((value) => ({ kind: 'json-value' as const, body: Buffer.from(JSON.stringify(value) ?? 'null') })),
    },
    {
      weight: 4,
      arbitrary: fc
        .tuple(file, fc.nat(), oddValues)
        .map(([f, pick, value]) => ({ kind: 'wrong-type' as const, body: mutate(f, pick, value) })),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(file, fc.nat(), fc.integer({ min: options.hugeLength / 2, max: options.hugeLength }))
        .map(([f, pick, n]) => ({ kind: 'huge-string' as const, body: mutate(f, pick, 'x'.repeat(n)) })),
    },
    {
      weight: 1,
      arbitrary: fc.constant({ kind: 'deep-array' as const, body: Buffer.from(deepJson(10_000, 'array')) }),
    },
    {
      weight: 1,
      arbitrary: fc.constant({ kind: 'deep-object' as const, body: Buffer.from(deepJson(10_000, 'object')) }),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(file, fc.nat(), fc.constantFrom<'array' | 'object'>('array', 'object'))
        .map(([f, pick, kind]) => ({
          kind: 'deep-inside' as const,
          body: mutate(f, pick, undefined, deepJson(10_000, kind)),
        })),
    },
    { weight: 1, arbitrary: fc.constant({ kind: 'empty' as const, body: Buffer.alloc(0) }) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          file,
          fc.array(fc.tuple(fc.nat(), fc.constantFrom(0xff, 0xfe, 0xc3, 0xe2, 0xf0, 0x80, 0x00)), {
            minLength: 1,
            maxLength: 8,
          }),
        )
        .map(([f, flips]) => {
          const body = Buffer.from(f);
          for (const [at, byte] of flips) body[at % body.length] = byte;
          return { kind: 'invalid-utf8' as const, body };
        }),
    },
    {
      weight: 1,
      arbitrary: file.map((f) => ({ kind: 'bom' as const, body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), f]) })),
    },
    {
      weight: 1,
      arbitrary: file.map((f) => ({
        kind: 'prototype-keys' as const,
        body: Buffer.from(
          `{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},${f.toString('utf8').trim().slice(1)}`,
        ),
      })),
    },
    {
      weight: 1,
      arbitrary: file.map((f) => ({
        kind: 'duplicate-keys' as const,
        body: Buffer.from(`${f.toString('utf8').trim().slice(0, -1)},"action":"delete","events":[],"push_data":null}`),
      })),
    },
  ];
  if (options.oversized !== false) {
    choices.push({
      weight: 1,
      arbitrary: fc
        .integer({ min: cap + 1, max: cap * 2 })
        .map((n) => ({ kind: 'oversized' as const, body: Buffer.from(`{"pad":"${'x'.repeat(n)}"}`) })),
    });
  }
  return fc.oneof(...choices);
}

// ── Requests ─────────────────────────────────────────────────────────────────────────────────

type Framing = { framing: RawRequest['framing']; chunkSize?: number; headers: Array<[string, string]>; label: string };

/** Content-Length (mostly), chunked in odd chunk sizes without Content-Length, or a Content-Length that lies low. */
function framings(bodyLength: number): fc.Arbitrary<Framing> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constant<Framing>({ framing: 'length', headers: [], label: 'length' }) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(7, 1000, 16_384).map((size): Framing => ({
        framing: 'chunked',
        chunkSize: bodyLength > 4096 && size === 7 ? 1000 : size,
        headers: [],
        label: `chunked/${size}`,
      })),
    },
    {
      weight: 1,
      arbitrary: fc.nat({ max: Math.max(0, bodyLength - 1) }).map((n): Framing => ({
        framing: 'none',
        headers: [['content-length', String(n)]],
        label: `lying-length/${n}`,
      })),
    },
  );
}

/** Methods: mostly the right one, sometimes any other token Node accepts. */
function methods(right: string): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 8, arbitrary: fc.constant(right) },
    {
      weight: 2,
      arbitrary: fc.constantFrom('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS', 'HEAD', 'TRACE', 'PROPFIND'),
    },
  );
}

/** Content types: the right one in other spellings, and wrong ones. */
function contentTypes(right: string): fc.Arbitrary<string | undefined> {
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(right, `${right}; charset=utf-8`, right.toUpperCase()) },
    {
      weight: 3,
      arbitrary: fc.constantFrom(
        undefined,
        '',
        'text/plain',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/jsonx',
        'application/json-seq',
        ';',
        'application/json, text/plain',
        'application/xml',
        'application/vnd.docker.distribution.events.v2+json',
        '*/*',
        'application/json; charset=utf-16',
      ),
    },
  );
}

/** Headers no sender needs, added to any request. */
const oddHeaders: fc.Arbitrary<Array<[string, string]>> = fc.subarray<[string, string]>([
  ['expect', '100-continue'],
  ['content-encoding', 'gzip'],
  ['x-request-id', 'a/b:c d'],
  ['x-request-id', 'r'.repeat(200)],
  ['x-delivery-id', '__proto__'],
  ['x-forwarded-for', '127.0.0.1, 10.0.0.1'],
  ['x-forwarded-proto', 'gopher'],
  ['cookie', 'session=1; __proto__=x'],
  ['x-github-event', 'push'],
  ['x-escalator', '\u00ff\u00fe\u00fd'],
  ['accept', 'text/html'],
  ['accept-encoding', 'br, gzip, deflate, zstd'],
  ['x-long', 'v'.repeat(8000)],
  ['connection', 'keep-alive'],
  ['upgrade', 'websocket'],
]);

interface Auth {
  headers: Array<[string, string]>;
  authentic: boolean;
  label: string;
}

/** `Authorization` for token routes: valid spellings, and everything else. */
function bearer(token: string, others: string[]): fc.Arbitrary<Auth> {
  const ok = (value: string, label: string): Auth => ({ headers: [['authorization', value]], authentic: true, label });
  const bad = (headers: Array<[string, string]>, label: string): Auth => ({ headers, authentic: false, label });
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc.constantFrom(
        ok(`Bearer ${token}`, 'bearer'),
        ok(token, 'bare-token'),
        ok(`bearer   ${token}`, 'bearer-lowercase'),
      ),
    },
    {
      weight: 5,
      arbitrary: fc.constantFrom(
        bad([], 'missing'),
        bad([['authorization', '']], 'empty'),
        bad([['authorization', 'Bearer ']], 'bearer-empty'),
        bad([['authorization', `Bearer ${token}x`]], 'token+1'),
        bad([['authorization', `Bearer ${token.slice(0, -1)}`]], 'token-1'),
        bad([['authorization', `Basic ${Buffer.from(`x:${token}`).toString('base64')}`]], 'basic'),
        bad([['authorization', `Bearer ${'a'.repeat(8000)}`]], 'huge'),
        bad([['authorization', `Bearer ${token.toUpperCase()}`]], 'uppercase'),
        bad([['authorization', 'Bearer \u00ff\u00fe']], 'latin1'),
        ...others.map((other) => bad([['authorization', `Bearer ${other}`]], 'another-secret')),
      ),
    },
  );
}

function garAuth(secrets: Secrets): fc.Arbitrary<Auth> {
  const ok = (token: string, label: string): Auth => ({
    headers: [['authorization', `Bearer ${token}`]],
    authentic: true,
    label,
  });
  const bad = (value: string | undefined, label: string): Auth => ({
    headers: value === undefined ? [] : [['authorization', value]],
    authentic: false,
    label,
  });
  const none = `${Buffer.from('{"alg":"none","kid":"k1"}').toString('base64url')}.${Buffer.from(JSON.stringify({ iss: 'https://accounts.google.com', aud: secrets.garAudience, email: secrets.garServiceAccount, exp: 4e9 })).toString('base64url')}.`;
  const [header, claims] = secrets.garToken().split('.');
  return fc.oneof(
    { weight: 4, arbitrary: fc.constant(ok(secrets.garToken(), 'oidc')) },
    {
      weight: 6,
      arbitrary: fc.constantFrom(
        bad(undefined, 'missing'),
        bad('Bearer', 'bearer-empty'),
        bad('Bearer not.a.jwt', 'garbage'),
        bad('Bearer a.b', 'two-parts'),
        bad(`Bearer ${none}`, 'alg-none'),
        bad(`Bearer ${header}.${claims}.${Buffer.from('forged').toString('base64url')}`, 'forged-signature'),
        bad(`Bearer ${secrets.garToken({ exp: 1 })}`, 'expired'),
        bad(`Bearer ${secrets.garToken({ aud: 'https://elsewhere' })}`, 'audience'),
        bad(`Bearer ${secrets.garToken({ email: 'evil@x.iam.gserviceaccount.com' })}`, 'service-account'),
        bad(`Bearer ${secrets.registryToken}`, 'registry-token'),
        bad(`Bearer ${'e30'.repeat(2000)}.${'e30'.repeat(2000)}.${'A'.repeat(2000)}`, 'huge'),
        bad(
          `Bearer ${Buffer.from('{"alg":"RS256","kid":"__proto__"}').toString('base64url')}.${claims}.AAAA`,
          'kid-proto',
        ),
        bad(`Bearer ${Buffer.from('null').toString('base64url')}.${claims}.AAAA`, 'header-null'),
        bad(`Bearer ${header}.${Buffer.from('[1]').toString('base64url')}.AAAA`, 'claims-array'),
        bad(`Bearer ${Buffer.from('{"alg":"RS256","kid":7}').toString('base64url')}.${claims}.AAAA`, 'kid-number'),
        bad(
          `Bearer ${Buffer.from('{"alg":"RS256","kid":"rotated-away"}').toString('base64url')}.${claims}.AAAA`,
          'kid-unknown',
        ),
      ),
    },
  );
}

const headerAuthSources = sourcesBy('bearer');
const pathTokenSources = sourcesBy('path-token');
const googleOidcSources = sourcesBy('google-oidc');

function build(
  endpoint: string,
  method: string,
  path: string,
  headers: Array<[string, string]>,
  body: { kind: string; body: Buffer },
  framing: Framing,
  authentic: boolean | undefined,
  label: string,
): FuzzCase {
  return {
    endpoint,
    request: {
      method,
      path,
      headers: [...headers, ...framing.headers],
      body: body.body,
      framing: framing.framing,
      ...(framing.chunkSize !== undefined ? { chunkSize: framing.chunkSize } : {}),
    },
    ...(authentic !== undefined ? { authentic } : {}),
    shape: `${label} body=${body.kind} ${framing.label}`,
    bodyKind: body.kind,
  };
}

/** A POST intake route: method, content type, auth, body and framing all drawn independently. */
function intakeCases(
  endpoint: string,
  path: fc.Arbitrary<{ path: string; auth?: Auth }>,
  auth: fc.Arbitrary<Auth>,
  files: Buffer[],
  contentType: string,
  cap: number,
  hugeLength: number,
): fc.Arbitrary<FuzzCase> {
  return fc
    .record({
      method: methods('POST'),
      type: contentTypes(contentType),
      path,
      auth,
      body: bodies(files, cap, { hugeLength }),
      odd: oddHeaders,
    })
    .chain((parts) => framings(parts.body.body.length).map((framing) => ({ ...parts, framing })))
    .map(({ method, type, path: target, auth: headerAuth, body, odd, framing }) => {
      const credentials = target.auth ?? headerAuth;
      const headers: Array<[string, string]> = [
        ...(type === undefined ? [] : [['content-type', type] as [string, string]]),
        ...credentials.headers,
        ...odd,
      ];
      return build(
        endpoint,
        method,
        target.path,
        headers,
        body,
        framing,
        credentials.authentic,
        `${method} ${credentials.label} ct=${type ?? '-'}`,
      );
    });
}

/** Path-token routes: the token in the path, in every wrong way. */
function tokenPaths(source: string, token: string): fc.Arbitrary<{ path: string; auth: Auth }> {
  const ok = (path: string, label: string) => ({ path, auth: { headers: [], authentic: true, label } });
  const bad = (path: string, label: string) => ({ path, auth: { headers: [], authentic: false, label } });
  const base = `/registry/${source}`;
  return fc.oneof(
    {
      weight: 5,
      arbitrary: fc.constantFrom(
        ok(`${base}/${token}`, 'path-token'),
        ok(`${base}/${token}/`, 'path-token/'),
        ok(`${base}/${token}?x=1`, 'path-token?query'),
      ),
    },
    {
      weight: 5,
      arbitrary: fc.constantFrom(
        bad(base, 'no-token'),
        bad(`${base}/`, 'no-token/'),
        bad(`${base}/${token}x`, 'token+1'),
        bad(`${base}/${token.slice(0, -1)}`, 'token-1'),
        bad(
          `${base}/${encodeURIComponent(token).replace(/[a-z]/, (c) => `%${c.charCodeAt(0).toString(16)}`)}`,
          'percent-encoded',
        ),
        bad(`${base}/${token}/extra`, 'extra-segment'),
        bad(`${base}?token=${token}`, 'token-in-query'),
        bad(`${base}/${'t'.repeat(4000)}`, 'huge'),
        bad(`${base}/__proto__`, 'proto'),
      ),
    },
  );
}

/** How many cases each endpoint gets at scale 1 (a few thousand in all). */
export const defaultRuns: Record<string, number> = {
  'github-webhook': 800,
  ...Object.fromEntries(registries.map(({ source }) => [`registry/${source}`, 200])),
  ci: 300,
  'admin/relay': 300,
  healthz: 100,
  readyz: 100,
  metrics: 60,
  ...Object.fromEntries(agentNames.map((agent) => [`agents/${agent}`, 200])),
  unknown: 300,
  'malformed-http': 300,
};

/** The generated requests of every endpoint, keyed as in {@link defaultRuns}. */
export function endpointCases(secrets: Secrets): Record<string, fc.Arbitrary<FuzzCase>> {
  const cap = secrets.maxBodyBytes;
  const cases: Record<string, fc.Arbitrary<FuzzCase>> = {};
  for (const source of headerAuthSources) {
    const { files, contentType } = registryFixtures[source]!;
    cases[`registry/${source}`] = intakeCases(
      `registry/${source}`,
      fc.constantFrom(
        { path: `/registry/${source}` },
        { path: `/registry/${source}/` },
        { path: `/registry/${source}?a=b` },
      ),
      bearer(secrets.registryToken, [
        secrets.ciToken,
        secrets.adminToken,
        ...(secrets.scoped ? pathTokenSources.map((path) => secrets.pathToken(path)) : []),
      ]),
      files,
      contentType,
      cap,
      cap - 2048,
    );
  }
  for (const source of pathTokenSources) {
    const { files, contentType } = registryFixtures[source]!;
    cases[`registry/${source}`] = intakeCases(
      `registry/${source}`,
      tokenPaths(source, secrets.pathToken(source)),
      fc.constant({ headers: [], authentic: false, label: '' }),
      files,
      contentType,
      cap,
      cap - 2048,
    );
  }
  for (const source of googleOidcSources) {
    const { files, contentType } = registryFixtures[source]!;
    cases[`registry/${source}`] = intakeCases(
      `registry/${source}`,
      fc.constant({ path: `/registry/${source}` }),
      garAuth(secrets),
      files,
      contentType,
      cap,
      cap - 2048,
    );
  }
  cases.ci = intakeCases(
    'ci',
    fc.constantFrom({ path: '/api/v1/images' }, { path: '/api/v1/images?dry=1' }),
    bearer(secrets.ciToken, [
      secrets.registryToken,
      secrets.adminToken,
      ...(secrets.scoped
        ? [
            ...pathTokenSources.map((path) => secrets.pathToken(path)),
            secrets.ciOidcToken({ aud: 'https://elsewhere' }),
            secrets.ciOidcToken({ exp: 1 }),
            secrets.ciOidcToken({ repository_owner: undefined }),
            secrets.garToken(),
          ]
        : []),
    ]),
    registryFixtures.ci!.files,
    'application/json',
    cap,
    cap - 2048,
  );
  for (const agent of agentNames) cases[`agents/${agent}`] = agentCases(agent, secrets);
  cases['github-webhook'] = webhookCases(secrets);
  cases['admin/relay'] = adminCases(secrets);
  for (const path of ['healthz', 'readyz', 'metrics']) cases[path] = publicCases(path);
  cases.unknown = unknownCases();
  cases['malformed-http'] = malformedCases();
  return cases;
}

/** The owner the agent cases name, as the fixtures' repoURL does (https://github.com/example/gitops). */
export const FUZZ_OWNER = 'example';

/**
 * Agent reports: real bodies and fuzzed ones, to the plain route and to one naming a repository,
 * authenticated as the agent's row of the table says: Flux signed right, with another key, over
 * other bytes, malformed or not at all; Argo CD with the bearer token or anything else.
 */
function agentCases(agent: (typeof agentNames)[number], secrets: Secrets): fc.Arbitrary<FuzzCase> {
  const endpoint = `agents/${agent}`;
  // The last two are mistyped URLs with a secret where the owner belongs: refused, and never logged.
  const paths = fc.constantFrom(
    `/agents/${agent}`,
    `/agents/${agent}/`,
    `/agents/${agent}/${FUZZ_OWNER}/gitops`,
    `/agents/${agent}/${FUZZ_OWNER}/gitops`,
    `/agents/${agent}/${agentKey(secrets.agentToken, FUZZ_OWNER)}`,
    `/agents/${agent}/${FUZZ_OWNER}/gitops/${secrets.agentToken}`,
  );
  if (agentTable[agent].auth === 'bearer')
    return intakeCases(
      endpoint,
      paths.map((path) => ({ path })),
      bearer(agentKey(secrets.agentToken, FUZZ_OWNER), [
        secrets.agentToken,
        agentKey(secrets.agentToken, 'intruder'),
        secrets.registryToken,
        secrets.adminToken,
        secrets.webhookSecret,
      ]),
      agentFixtures[agent]!,
      'application/json',
      AGENT_MAX_BODY_BYTES,
      AGENT_MAX_BODY_BYTES - 2048,
    );
  type Signing = 'right' | 'wrong-key' | 'other-bytes' | 'missing' | 'malformed';
  return fc
    .record({
      method: methods('POST'),
      type: contentTypes('application/json'),
      path: paths,
      signing: fc.constantFrom<Signing>('right', 'right', 'right', 'wrong-key', 'other-bytes', 'missing', 'malformed'),
      malformed: fc.constantFrom(
        'sha256=',
        'sha256=zz',
        `sha256=${'0'.repeat(64)}`,
        'SHA256=abc',
        'sha512=1',
        '='.repeat(100),
      ),
      body: bodies(agentFixtures[agent]!, AGENT_MAX_BODY_BYTES, { hugeLength: AGENT_MAX_BODY_BYTES - 2048 }),
      odd: oddHeaders,
    })
    .chain((parts) => framings(parts.body.body.length).map((framing) => ({ ...parts, framing })))
    .map(({ method, type, path, signing, malformed, body, odd, framing }) => {
      const signature = {
        right: githubSignature(agentKey(secrets.agentToken, FUZZ_OWNER), body.body),
        'wrong-key': githubSignature(secrets.webhookSecret, body.body),
        'other-bytes': githubSignature(
          agentKey(secrets.agentToken, FUZZ_OWNER),
          Buffer.concat([body.body, Buffer.from(' ')]),
        ),
        missing: undefined,
        malformed,
      }[signing];
      const headers: Array<[string, string]> = [
        ...(type === undefined ? [] : [['content-type', type] as [string, string]]),
        ...(signature === undefined ? [] : [['x-signature', signature] as [string, string]]),
        ...odd,
      ];
      return build(
        endpoint,
        method,
        path,
        headers,
        body,
        framing,
        signing === 'right',
        `${method} sig=${signing} ct=${type ?? '-'}`,
      );
    });
}

/**
 * GitHub deliveries: real examples and fuzzed bodies, signed right, signed with another secret,
 * signed over other bytes, or not signed; event and delivery headers present, missing or odd.
 * Fuzzed bodies go as events the app handles and as events it ignores.
 */
function webhookCases(secrets: Secrets): fc.Arbitrary<FuzzCase> {
  const files = githubDeliveries.map((delivery) => delivery.body);
  type Signing = 'right' | 'wrong-secret' | 'other-bytes' | 'missing' | 'malformed' | 'sha1-only';
  return fc
    .record({
      method: methods('POST'),
      type: contentTypes('application/json'),
      delivery: fc.constantFrom(...githubDeliveries),
      unhandledEvent: fc.constantFrom(
        'ping',
        'star',
        'watch',
        'fork',
        'gollum',
        'meta',
        'security_and_analysis',
        'workflow_run',
        'zzz_unknown_event',
      ),
      handled: fc.boolean(),
      oddEvent: fc.oneof(
        { weight: 8, arbitrary: fc.constant(null) },
        {
          weight: 2,
          arbitrary: fc.constantFrom(
            undefined,
            '',
            'PUSH',
            'push.created',
            '__proto__',
            'constructor',
            'valueOf',
            'x'.repeat(300),
            '../../push',
          ),
        },
      ),
      deliveryId: fc.oneof(
        { weight: 8, arbitrary: fc.uuid() },
        { weight: 2, arbitrary: fc.constantFrom(undefined, '', 'a:b/c', 'd'.repeat(2000), '__proto__') },
      ),
      signing: fc.constantFrom<Signing>(
        'right',
        'right',
        'right',
        'wrong-secret',
        'other-bytes',
        'missing',
        'malformed',
        'sha1-only',
      ),
      malformed: fc.constantFrom(
        'sha256=',
        'sha256=zz',
        `sha256=${'0'.repeat(64)}`,
        'sha256=' + 'f'.repeat(63),
        'SHA256=abc',
        'md5=1',
        '='.repeat(100),
      ),
      body: bodies(files, 25 * 1024 * 1024, { hugeLength: 1024 * 1024, oversized: false }),
      // The event header is drawn above; a second one would send fuzzed bodies as handled events.
      odd: oddHeaders.map((headers) => headers.filter(([name]) => name !== 'x-github-event')),
    })
    .chain((parts) => framings(parts.body.body.length).map((framing) => ({ ...parts, framing })))
    .map(
      ({
        method,
        type,
        delivery,
        unhandledEvent,
        handled,
        oddEvent,
        deliveryId,
        signing,
        malformed,
        body,
        odd,
        framing,
      }) => {
        // A real body goes as its own event; a fuzzed one as an event the app handles (its payload
        // check must refuse what handlers cannot read) or as one it has no handler for.
        const real = body.kind === 'fixture' || body.kind === 'truncated';
        const event =
          oddEvent !== null
            ? oddEvent
            : real
              ? (githubDeliveries.find(
                  (d) => d.body === body.body || d.body.subarray(0, body.body.length).equals(body.body),
                )?.event ?? delivery.event)
              : handled
                ? delivery.event
                : unhandledEvent;
        const signature = {
          right: githubSignature(secrets.webhookSecret, body.body),
          'wrong-secret': githubSignature('not-the-secret', body.body),
          'other-bytes': githubSignature(secrets.webhookSecret, Buffer.concat([body.body, Buffer.from(' ')])),
          missing: undefined,
          malformed,
          'sha1-only': undefined,
        }[signing];
        const headers: Array<[string, string]> = [
          ...(type === undefined ? [] : [['content-type', type] as [string, string]]),
          ...(event === undefined ? [] : [['x-github-event', event] as [string, string]]),
          ...(deliveryId === undefined ? [] : [['x-github-delivery', deliveryId] as [string, string]]),
          ...(signature === undefined ? [] : [['x-hub-signature-256', signature] as [string, string]]),
          ...(signing === 'sha1-only'
            ? [['x-hub-signature', 'sha1=0000000000000000000000000000000000000000'] as [string, string]]
            : []),
          ...odd,
        ];
        return build(
          'github-webhook',
          method,
          '/api/github/webhooks',
          headers,
          body,
          framing,
          signing === 'right',
          `${method} sig=${signing} event=${event ?? '-'} ct=${type ?? '-'}`,
        );
      },
    );
}

function adminCases(secrets: Secrets): fc.Arbitrary<FuzzCase> {
  const query = fc.record({
    limit: fc.option(
      fc.oneof(
        fc.integer().map(String),
        fc.string({ maxLength: 10 }),
        fc.constantFrom('0', '-1', '1', '200', '201', '1e3', 'NaN', 'Infinity', '1.5', '', '0x10', ' 5'),
      ),
      { nil: undefined },
    ),
    target: fc.option(
      fc.oneof(
        fc.string({ maxLength: 20 }),
        fc.constantFrom('argocd', '__proto__', 'constructor', 'ARGOCD', 'argocd ', '%00'),
      ),
      { nil: undefined },
    ),
    junk: fc.option(fc.constantFrom('&&&', '&limit=1&limit=2', '&target=argocd&target=x', '#frag', '&%zz'), {
      nil: undefined,
    }),
  });
  return fc
    .record({
      method: methods('GET'),
      auth: bearer(secrets.adminToken, [secrets.registryToken, secrets.ciToken]),
      query,
      odd: oddHeaders,
      body: fc.constantFrom(Buffer.alloc(0), Buffer.from('{"limit":1}')),
    })
    .map(({ method, auth, query: q, odd, body }) => {
      const params = [
        q.limit === undefined ? '' : `limit=${encodeURIComponent(q.limit)}`,
        q.target === undefined ? '' : `target=${encodeURIComponent(q.target)}`,
      ]
        .filter(Boolean)
        .join('&');
      const path = `/admin/relay/deliveries${params || q.junk ? `?${params}${q.junk ?? ''}` : ''}`;
      // The bare-token spelling is for registries; this route takes only "Bearer <token>".
      const authentic = auth.authentic && auth.label !== 'bare-token';
      return build(
        'admin/relay',
        method,
        path,
        [...auth.headers, ...odd],
        { kind: body.length ? 'json' : 'empty', body },
        { framing: 'length', headers: [], label: 'length' },
        authentic,
        `${method} ${auth.label}`,
      );
    });
}

function publicCases(name: string): fc.Arbitrary<FuzzCase> {
  return fc
    .record({
      method: fc.constantFrom('GET', 'GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH'),
      suffix: fc.constantFrom(
        '',
        '?',
        '?x=1',
        '/',
        '?verbose=true&__proto__=1',
        '#x',
        `?${'q'.repeat(4000)}`,
        '%20',
        '/..',
        '.json',
      ),
      body: fc.constantFrom(Buffer.alloc(0), Buffer.from('{}'), Buffer.from(deepJson(10_000, 'array'))),
      odd: oddHeaders,
    })
    .map(({ method, suffix, body, odd }) =>
      build(
        name,
        method,
        `/${name}${suffix}`,
        odd,
        { kind: body.length ? 'body' : 'empty', body },
        { framing: 'length', headers: [], label: 'length' },
        undefined,
        `${method} ${suffix}`,
      ),
    );
}

function unknownCases(): fc.Arbitrary<FuzzCase> {
  const paths = fc.oneof(
    fc.webPath().map((path) => `/${path.replace(/^\/+/, '')}`),
    fc.constantFrom(
      '/',
      '/registry',
      '/registry/',
      '/registry/unknown',
      '/registry/GITHUB',
      '/registry/github/a/b',
      '/registry/__proto__',
      '/registry/constructor',
      '/registry/hasownproperty',
      '/api/github/webhooks/x',
      '/api/github',
      '/api/v1/images/',
      '/api/v1/images/x',
      '/api/v1',
      '/admin',
      '/admin/relay',
      '/admin/relay/deliveries/x',
      '/admin/queues',
      '/%00',
      '/..%2f..%2fetc/passwd',
      '/healthz/..',
      '/;/healthz',
      '/%2e%2e/healthz',
      `/${'a'.repeat(8000)}`,
      'http://evil.example.com/x',
      'https://user:pass@evil/api/v1/images',
      '*',
      '/\\\\evil',
      '/api/github/webhooks%00',
      '/metrics/../admin/relay/deliveries',
      '/HEALTHZ',
    ),
  );
  return fc
    .record({
      method: fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH'),
      path: paths,
      body: fc.constantFrom(Buffer.alloc(0), Buffer.from('{"image":"ghcr.io/example/hello:1"}')),
      odd: oddHeaders,
    })
    .map(({ method, path, body, odd }) =>
      build(
        'unknown',
        method,
        path,
        [['content-type', 'application/json'], ...odd],
        { kind: body.length ? 'json' : 'empty', body },
        { framing: 'length', headers: [], label: 'length' },
        undefined,
        method,
      ),
    );
}

/** Request heads Node's parser has to refuse: random bytes, and valid heads with bytes flipped. */
function malformedCases(): fc.Arbitrary<FuzzCase> {
  const valid = [
    'GET /healthz HTTP/1.1\r\nhost: x\r\n',
    'GET /admin/relay/deliveries?limit=1 HTTP/1.1\r\nhost: x\r\nauthorization: Bearer x\r\n',
    'DELETE /api/v1/images HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\n',
    'GET /registry/harbor HTTP/1.1\r\nhost: x\r\nx-request-id: 1\r\n',
  ];
  const fixed = [
    'GET / HTTP/9.9\r\nhost: x\r\n',
    'GET  /healthz HTTP/1.1\r\nhost: x\r\n',
    'GET /healthz HTTP/1.1\r\n host: x\r\n',
    'GET /healthz HTTP/1.1\r\nhost: x\r\nx: a\u0000b\r\n',
    'GET /healthz HTTP/1.1\r\nhost: x\r\nbad header: 1\r\n',
    'GET /healthz HTTP/1.1\r\nhost: x\r\ncontent-length: -1\r\n',
    'GET /healthz HTTP/1.1\r\nhost: x\r\ncontent-length: 1e3\r\n',
    'GET /healthz HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked, gzip\r\n',
    'GET /healthz HTTP/1.1\r\nhost: x\r\ntransfer-encoding: gzip\r\n',
    'GET /healthz HTTP/1.1\r\n',
    'GET /healthz HTTP/1.1\r\nhost: a\r\nhost: b\r\n',
    'GET /healthz HTTP/1.1\nhost: x\n',
    'G\u00c9T /healthz HTTP/1.1\r\nhost: x\r\n',
    `GET /healthz HTTP/1.1\r\nhost: x\r\n${Array.from({ length: 3000 }, (_, i) => `x-${i}: 1`).join('\r\n')}\r\n`,
  ];
  return fc
    .oneof(
      // Bytes that are only CR and LF are empty lines before a request line, which HTTP/1.1 servers
      // skip (RFC 9112 §2.2): the server is right to wait for the request (web-server.test.ts shows it).
      fc
        .uint8Array({ minLength: 1, maxLength: 512 })
        .filter((bytes) => bytes.some((byte) => byte !== 0x0d && byte !== 0x0a))
        .map((bytes) => ({ kind: 'random-bytes', head: Buffer.from(bytes) })),
      fc
        .tuple(
          fc.constantFrom(...valid),
          fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
        )
        .map(([head, flips]) => {
          const bytes = Buffer.from(head, 'latin1');
          for (const [at, byte] of flips) bytes[at % bytes.length] = byte;
          return { kind: 'flipped', head: bytes };
        }),
      fc.constantFrom(...fixed).map((head) => ({ kind: 'fixed', head: Buffer.from(head, 'latin1') })),
    )
    .map(({ kind, head }) => ({
      endpoint: 'malformed-http',
      // The blank line ends the head, so the parser decides at once instead of waiting for more.
      request: {
        method: 'GET',
        path: '',
        headers: [],
        framing: 'none' as const,
        rawHead: Buffer.concat([head, Buffer.from('\r\n\r\n')]),
      },
      shape: kind,
    }));
}

// ── Sweep ────────────────────────────────────────────────────────────────────────────────────

/** Every path to a value in a JSON document, objects and arrays both. */
function everyPath(value: unknown): Array<Array<string | number>> {
  return pathsOf(value).filter((path) => path.length > 0);
}

/**
 * Not random: every field of every real payload replaced in turn by a 10,000-deep array, a
 * 10,000-deep object and (registry routes) a string near the body limit, sent with valid
 * credentials, so each reaches the code that reads that field. GitHub deliveries go as `ping`
 * (no handler of ours; see the known gaps in test/fuzz/http.test.ts), fields two levels deep at
 * most, the second level with the deep array only.
 */
export function sweepCases(secrets: Secrets): FuzzCase[] {
  const cases: FuzzCase[] = [];
  const deep = [deepJson(10_000, 'array'), deepJson(10_000, 'object')];
  for (const [source, { files, contentType }] of Object.entries(registryFixtures)) {
    const { path, token, endpoint } = intakeTarget(source, secrets);
    for (const file of files) {
      const document = JSON.parse(file.toString('utf8')) as unknown;
      const raws = [...deep, JSON.stringify('x'.repeat(secrets.maxBodyBytes - file.length - 64))];
      everyPath(document).forEach((at, pick) => {
        for (const raw of raws) {
          cases.push({
            endpoint,
            request: {
              method: 'POST',
              path,
              framing: 'length',
              body: mutate(file, pick + 1, undefined, raw),
              headers: [
                ['content-type', contentType],
                ['authorization', `Bearer ${token}`],
              ],
            },
            authentic: true,
            shape: `sweep ${at.join('.')}=${raw.slice(0, 6)}…`,
          });
        }
      });
    }
  }
  for (const agent of agentNames) {
    for (const file of agentFixtures[agent]!) {
      const document = JSON.parse(file.toString('utf8')) as unknown;
      const raws = [...deep, JSON.stringify('x'.repeat(AGENT_MAX_BODY_BYTES - file.length - 64))];
      everyPath(document).forEach((at, pick) => {
        for (const raw of raws) {
          const body = mutate(file, pick + 1, undefined, raw);
          cases.push({
            endpoint: `agents/${agent}`,
            request: {
              method: 'POST',
              path: `/agents/${agent}/${FUZZ_OWNER}/gitops`,
              framing: 'length',
              body,
              headers: [
                ['content-type', 'application/json'],
                agentTable[agent].auth === 'hmac'
                  ? ['x-signature', githubSignature(agentKey(secrets.agentToken, FUZZ_OWNER), body)]
                  : ['authorization', `Bearer ${agentKey(secrets.agentToken, FUZZ_OWNER)}`],
              ],
            },
            authentic: true,
            shape: `sweep ${at.join('.')}=${raw.slice(0, 6)}…`,
          });
        }
      });
    }
  }
  for (const { body: file } of githubDeliveries) {
    const document = JSON.parse(file.toString('utf8')) as unknown;
    everyPath(document).forEach((at, pick) => {
      // Probot, @octokit/webhooks and the app's handlers read fields near the top.
      if (at.length > 2) return;
      for (const raw of at.length === 1 ? deep : deep.slice(0, 1)) {
        const body = mutate(file, pick + 1, undefined, raw);
        cases.push({
          endpoint: 'github-webhook',
          request: {
            method: 'POST',
            path: '/api/github/webhooks',
            framing: 'length',
            body,
            headers: [
              ['content-type', 'application/json'],
              ['x-github-event', 'ping'],
              ['x-github-delivery', `sweep-${cases.length}`],
              ['x-hub-signature-256', githubSignature(secrets.webhookSecret, body)],
            ],
          },
          authentic: true,
          shape: `sweep ${at.join('.')}=${raw.slice(0, 6)}…`,
        });
      }
    });
  }
  return cases;
}
