import { readFileSync } from 'node:fs';
import { isMap, isSeq, LineCounter, parseDocument, type Document } from 'yaml';
import { z } from 'zod';
import { checkGlob, type RelayEvent, type RelayTargetType } from '../planners/relay.js';

/**
 * Relay targets: the in-cluster agents (Argo CD, Flux receivers) that get a re-signed refresh
 * webhook when a tracked repository moves. They are server configuration only, read once at boot
 * from `ESCALATOR_RELAY_TARGETS` (JSON) or `ESCALATOR_RELAY_TARGETS_FILE` (YAML or JSON): a
 * repository can never add one, so no repository can make the app call an arbitrary URL.
 * See docs/relay.md.
 */

/** `500ms`, `5s`, `1m`, or a number of milliseconds. */
const DURATION = /^(\d+)(ms|s|m)$/;

function duration(options: { min: number; max: number; fallback: number }) {
  return z
    .union([
      z.number().int().nonnegative(),
      z.string().regex(DURATION, 'must be a duration such as 300ms, 5s or 1m, or a number of milliseconds'),
    ])
    .default(options.fallback)
    .transform((value, context) => {
      let ms = typeof value === 'number' ? value : 0;
      if (typeof value === 'string') {
        const [, amount, unit] = DURATION.exec(value) ?? [];
        ms = Number(amount) * (unit === 'm' ? 60_000 : unit === 's' ? 1000 : 1);
      }
      if (ms < options.min || ms > options.max) {
        context.addIssue({
          code: 'custom',
          message: `must be between ${options.min} ms and ${options.max} ms, got ${ms} ms`,
        });
        return z.NEVER;
      }
      return ms;
    });
}

const glob = z.string().superRefine((pattern, context) => {
  const problem = checkGlob(pattern);
  // The path-pattern problems name the pattern themselves; only "is empty" needs it named.
  if (problem) context.addIssue({ code: 'custom', message: pattern === '' ? `glob "" ${problem}` : problem });
});

/** Where a target's secret is read from at boot. The value itself never appears in config or logs. */
export const SecretRef = z.union(
  [
    z.strictObject({
      env: z
        .string()
        .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
        .describe('Environment variable holding the secret.'),
    }),
    z.strictObject({
      file: z
        .string()
        .min(1)
        .describe('File holding the secret (a mounted Kubernetes Secret); one trailing newline is ignored.'),
    }),
  ],
  { error: 'must be {env: NAME} or {file: PATH}; the secret itself is never written here' },
);
export type SecretRef = z.infer<typeof SecretRef>;

/** One relay target as written in the configuration. */
export const RelayTargetConfig = z.strictObject({
  /** Unique; appears in job ids, logs, metrics and the delivery log. */
  name: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$/,
      'must be 1–63 letters, digits, `.`, `_` or `-`, starting with a letter or digit',
    ),
  /** `argocd` (`/api/webhook`), `flux-github` or `flux-generic-hmac` (a Flux Receiver of that type). */
  type: z.enum(['argocd', 'flux-github', 'flux-generic-hmac']),
  /** Used exactly as written: nothing is appended or rewritten. */
  url: z.url({ protocol: /^https?$/, error: 'must be an http:// or https:// URL' }),
  secret: SecretRef,
  /** Globs over `owner/name`, case-insensitive: `example/gitops`, `example/*`, `*\/*`. */
  repos: z.array(glob).min(1, 'list at least one repository glob, for example "example/gitops" or "*/*"'),
  /** Globs over changed paths; a directory matches what is below it. @default ["**"] */
  paths: z.array(glob).min(1, 'list at least one path glob, or leave paths out to relay every change').default(['**']),
  /** Events to relay. `pull_request` serves Argo CD ApplicationSet pull-request generators. @default ["push"] */
  events: z
    .array(z.enum(['push', 'pull_request']))
    .min(1)
    .default(['push']),
  /** Time for the agent to answer one attempt. @default 5s */
  timeout: duration({ min: 100, max: 60_000, fallback: 5_000 }),
  /** Pushes to one ref within this window become one delivery; the newest payload wins. @default 300ms */
  coalesce: duration({ min: 0, max: 60_000, fallback: 300 }),
  /** Attempts before a delivery fails (timeouts, 5xx, 429 without Retry-After). @default 6 */
  attempts: z.number().int().min(1).max(25).default(6),
  /** First backoff between attempts; it doubles every attempt. @default 1s */
  backoff: duration({ min: 10, max: 600_000, fallback: 1_000 }),
  /**
   * Also send `X-Hub-Signature` (HMAC-SHA1) beside `X-Hub-Signature-256`: Argo CD 2.12 and
   * older verify only that header. @default true for argocd, false for flux-github
   */
  sha1Signature: z.boolean().optional(),
});
export type RelayTargetConfig = z.infer<typeof RelayTargetConfig>;

/** The whole file: a list of targets, or `{targets: [...]}`. */
export const RelayTargetsConfig = z
  .union([z.array(RelayTargetConfig), z.strictObject({ targets: z.array(RelayTargetConfig) })], {
    error: 'must be a list of targets, or a mapping with targets: [...]',
  })
  .transform((value) => (Array.isArray(value) ? value : value.targets));

/** One problem found in the targets, at a path below the list of targets. */
export interface RelayTargetProblem {
  path: PropertyKey[];
  message: string;
}

/**
 * Checks across fields, run on the raw items so they are reported together with the schema's
 * problems (zod skips refinements of an object that has other problems).
 */
export function checkTargets(raw: unknown): RelayTargetProblem[] {
  const items = Array.isArray(raw) ? raw : isRecord(raw) && Array.isArray(raw.targets) ? raw.targets : [];
  const problems: RelayTargetProblem[] = [];
  const names = new Map<string, number>();
  items.forEach((item: unknown, index) => {
    if (!isRecord(item)) return;
    const at = (field: string, message: string) => problems.push({ path: [index, field], message });
    if (typeof item.name === 'string') {
      const first = names.get(item.name);
      if (first !== undefined) at('name', `${item.name} is already the name of target ${first}; names must be unique`);
      else names.set(item.name, index);
    }
    if (item.type === 'flux-generic-hmac' && item.sha1Signature !== undefined) {
      at(
        'sha1Signature',
        'applies to argocd and flux-github targets only; flux-generic-hmac is signed with X-Signature',
      );
    }
    if (typeof item.url !== 'string') return;
    let url: URL;
    try {
      url = new URL(item.url);
    } catch {
      return; // the schema reports it
    }
    if (url.username || url.password)
      at('url', 'must not carry credentials; agents authenticate the signature, and URLs end up in logs');
    if (url.hash) at('url', 'must not have a #fragment');
    if (item.type === 'flux-github' || item.type === 'flux-generic-hmac') {
      if (url.search)
        at(
          'url',
          'must not have a query string: Flux finds a receiver by the exact request URI and answers 404 otherwise',
        );
      if (!/\/hook\/[0-9a-f]{64}$/.test(url.pathname)) {
        at(
          'url',
          'must end in the receiver path /hook/<sha256>; read it with kubectl get receiver NAME -o jsonpath={.status.webhookPath}',
        );
      }
    }
  });
  return problems;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * A target ready to use. `secret` is resolved at load and is not enumerable: `JSON.stringify`,
 * pino and `console.log` of a target never show it (job data holds only the name).
 */
export interface RelayTarget {
  name: string;
  type: RelayTargetType;
  url: string;
  repos: string[];
  paths: string[];
  events: RelayEvent[];
  timeoutMs: number;
  coalesceMs: number;
  attempts: number;
  backoffMs: number;
  sha1Signature: boolean;
  readonly secret: string;
}

export type RelayTargetsResult = { ok: true; targets: RelayTarget[] } | { ok: false; problems: string[] };

/**
 * Read and validate the relay targets from the environment: `ESCALATOR_RELAY_TARGETS` (JSON
 * text) or `ESCALATOR_RELAY_TARGETS_FILE` (a YAML or JSON file), and each target's secret from
 * the variable or file it names. Neither set: no targets. Every problem comes back with where it
 * is (`file:line:col` for a file) and its path; no secret value ever appears in one.
 */
export function loadRelayTargets(env: Readonly<Record<string, string | undefined>>): RelayTargetsResult {
  const inline = env.ESCALATOR_RELAY_TARGETS?.trim();
  const file = env.ESCALATOR_RELAY_TARGETS_FILE?.trim();
  if (inline && file) {
    return {
      ok: false,
      problems: ['ESCALATOR_RELAY_TARGETS and ESCALATOR_RELAY_TARGETS_FILE are both set; keep one of them'],
    };
  }
  if (!inline && !file) return { ok: true, targets: [] };

  let source: string;
  let text: string;
  if (file) {
    source = file;
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      return {
        ok: false,
        problems: [
          `ESCALATOR_RELAY_TARGETS_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check the path and the file's permissions`,
        ],
      };
    }
  } else {
    source = 'ESCALATOR_RELAY_TARGETS';
    text = inline!;
  }

  const lineCounter = new LineCounter();
  const document = parseDocument(text, { lineCounter, prettyErrors: false, uniqueKeys: true });
  if (document.errors.length > 0) {
    return {
      ok: false,
      problems: document.errors.map((error) => {
        const { line, col } = lineCounter.linePos(error.pos[0]);
        return `${source}:${line}:${col}: ${error.message.split('\n')[0]}; write a list of targets in YAML or JSON (docs/relay.md)`;
      }),
    };
  }
  const raw: unknown = document.toJS();
  const parsed = RelayTargetsConfig.safeParse(raw);
  const found = [
    ...(parsed.success ? [] : parsed.error.issues.flatMap((issue) => flattenIssue(issue))),
    ...checkTargets(raw),
  ];
  if (!parsed.success || found.length > 0) {
    const located = found.map(({ path, message }) => ({
      where: positionOf(document, lineCounter, path),
      text: `${formatPath(path) || '(top level)'}: ${message}`,
    }));
    located.sort((a, b) => a.where.line - b.where.line || a.where.col - b.where.col);
    const problems = located.map(
      ({ where, text }) => `${source}${where.line ? `:${where.line}:${where.col}` : ''}: ${text}`,
    );
    return { ok: false, problems: [...new Set(problems)] };
  }

  const problems: string[] = [];
  const targets: RelayTarget[] = [];
  parsed.data.forEach((config, index) => {
    const secret = resolveSecret(config.secret, env);
    if (!secret.ok) {
      problems.push(`${source}: targets[${index}].secret (${config.name}): ${secret.problem}`);
      return;
    }
    targets.push(toTarget(config, secret.value));
  });
  return problems.length > 0 ? { ok: false, problems } : { ok: true, targets };
}

/** Build a target from its configuration and its resolved secret (tests and benches use it too). */
export function toTarget(config: RelayTargetConfig, secret: string): RelayTarget {
  const target: Omit<RelayTarget, 'secret'> = {
    name: config.name,
    type: config.type,
    url: config.url,
    repos: config.repos,
    paths: config.paths,
    events: config.events,
    timeoutMs: config.timeout,
    coalesceMs: config.coalesce,
    attempts: config.attempts,
    backoffMs: config.backoff,
    sha1Signature: config.type === 'flux-generic-hmac' ? false : (config.sha1Signature ?? config.type === 'argocd'),
  };
  return Object.defineProperty(target, 'secret', { value: secret, enumerable: false, writable: false }) as RelayTarget;
}

function resolveSecret(
  ref: SecretRef,
  env: Readonly<Record<string, string | undefined>>,
): { ok: true; value: string } | { ok: false; problem: string } {
  if ('env' in ref) {
    const value = env[ref.env];
    if (!value)
      return {
        ok: false,
        problem: `environment variable ${ref.env} is not set or empty; set it to the agent's webhook secret`,
      };
    return { ok: true, value };
  }
  let value: string;
  try {
    value = readFileSync(ref.file, 'utf8').replace(/\r?\n$/, '');
  } catch (error) {
    return {
      ok: false,
      problem: `cannot read ${ref.file} (${(error as NodeJS.ErrnoException).code ?? 'error'}); check the path and the file's permissions`,
    };
  }
  if (!value) return { ok: false, problem: `${ref.file} is empty; it should hold the agent's webhook secret` };
  return { ok: true, value };
}

type Issue = z.core.$ZodIssue;

/** Unions report one issue with the alternatives inside; keep the alternative that got furthest. */
function flattenIssue(issue: Issue, prefix: PropertyKey[] = []): Array<{ path: PropertyKey[]; message: string }> {
  const path = [...prefix, ...issue.path];
  if (issue.code === 'invalid_union' && issue.errors.length > 0 && !issue.message.includes('{env: NAME}')) {
    const best = issue.errors.reduce((a, b) => (depth(b) > depth(a) ? b : a));
    if (depth(best) > 0) return best.flatMap((inner) => flattenIssue(inner, path));
  }
  if (issue.code === 'unrecognized_keys')
    return [{ path, message: `unknown setting${issue.keys.length === 1 ? '' : 's'} ${issue.keys.join(', ')}` }];
  return [{ path, message: issue.message }];
}

function depth(issues: Issue[]): number {
  return Math.max(
    0,
    ...issues.map((issue) => (issue.code === 'invalid_type' && issue.path.length === 0 ? 0 : issue.path.length + 1)),
  );
}

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((key, index) => (typeof key === 'number' ? `[${key}]` : `${index === 0 ? '' : '.'}${String(key)}`))
    .join('')
    .replace(/^\[/, 'targets[');
}

/** Line and column of the deepest node on `path` that exists in the document (0 when none). */
function positionOf(
  document: Document,
  lineCounter: LineCounter,
  path: readonly PropertyKey[],
): { line: number; col: number } {
  const root = document.contents;
  const prefix: PropertyKey[] = isMap(root) && !isSeq(root) && typeof path[0] === 'number' ? ['targets'] : [];
  const full = [...prefix, ...path];
  for (let n = full.length; n >= 0; n--) {
    const node = (n === 0 ? root : document.getIn(full.slice(0, n), true)) as
      { range?: [number, number, number] } | null | undefined;
    if (node?.range) return lineCounter.linePos(node.range[0]);
  }
  return { line: 0, col: 0 };
}
