/**
 * Golden corpus of configuration promotion (issue 33): `test/golden/config-promote/<case>/`.
 *
 * Every case is one app's environment folder at the four points a three-way promotion reads or
 * writes: `x-before/` and `x-after/` (environment X around the change a person merged), `y-now/`
 * (environment Y, `from: X`) and `y-expected/` (Y after the promotion, written by hand from meaning,
 * byte for byte: Y's comments, quotes, line endings and BOM stay as Y wrote them). `base/` holds what
 * the overlays build on. `case.yaml` says which public layout the case imitates, what changed in
 * X, what Y keeps and why, and the outcome of every file that does not come out `unchanged`.
 *
 * Two checks per case, independent of each other:
 * 1. the planner (`planConfigPromotion`) is given every file of the folder and must write exactly
 *    `y-expected/`, with the outcomes, kept lines and refusal lines case.yaml names;
 * 2. the expectation itself is checked with the real renderer, not the planner: X before, X after,
 *    Y now and Y expected are rendered (`kustomize build`, else `kubectl kustomize`; `helm template`
 *    for a case that names a chart) and compared object by object, field by field: every field X's
 *    change moved holds X's new value in Y expected, except the fields case.yaml says Y keeps (which
 *    stay as Y had them), and Y moved no other field. A case with a refused file renders Y expected
 *    exactly as Y now, and X's change must render to something (no case is vacuous).
 *
 * Renders run in parallel in a small pool, straight from the corpus folders (the overlays name
 * `../base`), and nothing is cached between runs.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, type Dirent } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { runTool, scrubbedEnv } from '../../src/adapters/render/exec.js';
import { findTools } from '../../src/adapters/render/tools.js';
import { planConfigPromotion } from '../../src/planners/config-promote/index.js';
import type { ConfigFileInput, ConfigFilePlan } from '../../src/planners/config-promote/index.js';
import { goldenRenderEnv } from '../support/golden-renders.js';
import { helmBinary } from '../support/helm-binaries.js';

const CORPUS = fileURLToPath(new URL('./config-promote/', import.meta.url));
/** Cases written from meaning that the planner refuses for now (config-promote-pending/README.md). */
const PENDING = fileURLToPath(new URL('./config-promote-pending/', import.meta.url));
const SIDES = ['x-before', 'x-after', 'y-now', 'y-expected'] as const;
type Side = (typeof SIDES)[number];

const Refusal = z.strictObject({
  /** Which text the line is in, as the planner names it. */
  file: z.enum(['sourceAfter', 'sourceBefore', 'target']),
  line: z.number().int().positive(),
  /** What cannot be mapped, for the reader (the planner's wording is not asserted). */
  why: z.string().min(1),
});

const Kept = z.strictObject({
  /** 1-based line of the value in Y's text. */
  line: z.number().int().positive(),
  /** The YAML path of the value in the file, for the reader. */
  path: z.string().min(1),
  why: z.string().min(1),
});

const FileExpectation = z.strictObject({
  outcome: z.enum(['edited', 'created', 'deleted', 'unchanged', 'kept', 'refused']),
  kept: z.array(Kept).default([]),
  refusals: z.array(Refusal).default([]),
});

const CaseMeta = z.strictObject({
  source: z.strictObject({
    /** The public repository whose layout the case imitates. */
    repository: z.url(),
    /** The public file the case's files are modelled on. */
    file: z.url(),
    /** The kind of change people make that the case is about. */
    change: z.string().min(1),
  }),
  /** What the person changed in X. */
  x: z.string().min(1),
  /** What Y keeps, and why (or why Y takes everything). */
  y: z.string().min(1),
  /** Expected outcome of every file whose outcome is not `unchanged`. */
  files: z.record(z.string(), FileExpectation).default({}),
  render: z
    .strictObject({
      /** Render each side with `helm template <release> <chart> -f <values>…` instead of kustomize (paths: chart from the case, values from the side). */
      helm: z
        .strictObject({ chart: z.string().min(1), release: z.string().min(1), values: z.array(z.string().min(1)).min(1) })
        .optional(),
      /**
       * Rendered fields Y keeps, `Kind/name path` (a subtree counts): X's change moved them, Y
       * expected holds Y's own value.
       */
      keeps: z.array(z.string().min(1)).default([]),
    })
    .default({ keeps: [] }),
});
type CaseMeta = z.infer<typeof CaseMeta>;

interface GoldenCase {
  name: string;
  dir: string;
  meta: CaseMeta;
  /** Every file path found in any side. */
  paths: string[];
}

/** Files of one side, relative to it, `/`-separated; an absent side is empty. */
function sideFiles(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return (readdirSync(dir, { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => relative(dir, join(entry.parentPath, entry.name)).split(sep).join('/'));
}

function loadCases(root: string = CORPUS): GoldenCase[] {
  return readdirSync(root, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const dir = join(root, name);
      const parsed = CaseMeta.safeParse(parse(readFileSync(join(dir, 'case.yaml'), 'utf8')));
      if (!parsed.success)
        throw new Error(`${relative(process.cwd(), dir)}/case.yaml is invalid; fix it:\n${z.prettifyError(parsed.error)}`);
      const paths = [...new Set(SIDES.flatMap((side) => sideFiles(join(dir, side))))].sort();
      return { name, dir, meta: parsed.data, paths };
    });
}

/** The file's bytes on one side, or undefined when the side has no such file. */
function bytesOf(c: GoldenCase, side: Side, path: string): Buffer | undefined {
  const file = join(c.dir, side, path);
  return existsSync(file) ? readFileSync(file) : undefined;
}

/** Text exactly as written (readFileSync(…, 'utf8') keeps a BOM as \uFEFF and CRLF as is). */
function textOf(c: GoldenCase, side: Side, path: string): string | undefined {
  return bytesOf(c, side, path)?.toString('utf8');
}

function expectationOf(c: GoldenCase, path: string): z.infer<typeof FileExpectation> {
  return c.meta.files[path] ?? { outcome: 'unchanged', kept: [], refusals: [] };
}

function sameBytes(a: Buffer | undefined, b: Buffer | undefined): boolean {
  return a === undefined ? b === undefined : b !== undefined && a.equals(b);
}

const cases = loadCases();

// ---------------------------------------------------------------------------------------------
// Rendering: a small pool of kustomize/helm runs, started once for the whole file.

const tools = findTools();
const home = mkdtempSync(join(tmpdir(), 'escalator-config-promote-golden-'));
afterAll(() => rmSync(home, { recursive: true, force: true }));
const POOL = 3;
let running = 0;
const waiting: Array<() => void> = [];

async function pooled<T>(work: () => Promise<T>): Promise<T> {
  if (running >= POOL) await new Promise<void>((resolve) => waiting.push(resolve));
  running += 1;
  try {
    return await work();
  } finally {
    running -= 1;
    waiting.shift()?.();
  }
}

/** A field of a rendered object: `Kind/name path` → the value as JSON. */
type Fields = Map<string, string>;

async function renderSide(c: GoldenCase, side: Side): Promise<Fields> {
  const sideDir = join(c.dir, side);
  let command: string;
  let args: string[];
  const helm = c.meta.render.helm;
  if (helm) {
    command = helmBinary('3.17');
    args = ['template', helm.release, join(c.dir, helm.chart), ...helm.values.flatMap((v) => ['-f', join(sideDir, v)])];
  } else {
    if (!tools.kustomize) throw new Error('neither kustomize nor kubectl is on PATH; install one to run this corpus');
    command = tools.kustomize.command;
    args = [...tools.kustomize.args, sideDir];
  }
  const result = await pooled(() =>
    runTool(command, args, {
      cwd: c.dir,
      timeoutMs: 30_000,
      maxOutputBytes: 8 * 1024 * 1024,
      maxMemoryBytes: 1024 * 1024 * 1024,
      env: { ...scrubbedEnv(process.env.PATH, home), ...goldenRenderEnv },
    }),
  );
  if (result.code !== 0)
    throw new Error(`${c.name}/${side} does not render (${command} ${args.join(' ')}): ${result.stderr.trim()}`);
  const objects: unknown[] = [];
  for (const doc of parseAllDocuments(result.stdout)) {
    if (doc.errors.length > 0) throw new Error(`${c.name}/${side} rendered YAML that does not parse: ${doc.errors[0]?.message}`);
    const value: unknown = doc.toJS();
    if (value !== null && value !== undefined) objects.push(value);
  }
  return flattenObjects(objects, helm ? {} : overlayNames(sideDir));
}

/** What the side's kustomization adds to every name and namespace; removed so X's and Y's objects line up. */
function overlayNames(sideDir: string): { prefix?: string; suffix?: string; namespace?: string } {
  const file = ['kustomization.yaml', 'kustomization.yml', 'Kustomization']
    .map((name) => join(sideDir, name))
    .find((path) => existsSync(path));
  if (!file) return {};
  const doc = parse(readFileSync(file, 'utf8').replace(/^\uFEFF/, '')) as Record<string, unknown> | null;
  const pick = (key: string): string | undefined => (typeof doc?.[key] === 'string' ? doc[key] : undefined);
  return { prefix: pick('namePrefix'), suffix: pick('nameSuffix'), namespace: pick('namespace') };
}

/** kustomize's name hash: ten characters of its alphabet after a dash (api/hasher: hex with 0,1,3,a,e swapped out). */
const HASHED = /^(.+)-[2456789bcdfghkmt]{10}$/;

/** Flattens every rendered object into `Kind/name path` → JSON, names freed of the overlay's prefix, suffix, namespace and generator hashes. */
function flattenObjects(objects: unknown[], overlay: { prefix?: string; suffix?: string; namespace?: string }): Fields {
  const prefix = overlay.prefix ?? '';
  const suffix = overlay.suffix ?? '';
  const renames = new Map<string, string>();
  for (const object of objects) {
    const kind = String((object as { kind?: unknown }).kind);
    const name = (object as { metadata?: { name?: unknown } }).metadata?.name;
    if (typeof name !== 'string') continue;
    let plain = name;
    const hashed = (kind === 'ConfigMap' || kind === 'Secret') && HASHED.exec(plain);
    if (hashed) plain = `${hashed[1]}-<hash>`;
    if (plain.startsWith(prefix) && plain.endsWith(suffix))
      plain = plain.slice(prefix.length, plain.length - suffix.length);
    if (plain !== name) renames.set(name, plain);
  }
  const fields: Fields = new Map();
  for (const object of objects) {
    const kind = String((object as { kind?: unknown }).kind);
    const name = String((object as { metadata?: { name?: unknown } }).metadata?.name);
    const metadata = (object as { metadata?: Record<string, unknown> }).metadata;
    if (metadata && overlay.namespace !== undefined && metadata.namespace === overlay.namespace)
      metadata.namespace = '<namespace>';
    walk(object, `${kind}/${renames.get(name) ?? name}`, '', fields, renames);
  }
  return fields;
}

/** The key kustomize and Kubernetes identify list items by, in the order they are tried. */
const ITEM_KEYS = ['name', 'containerPort', 'port', 'mountPath', 'key', 'ip'];

function walk(node: unknown, object: string, path: string, into: Fields, renames: Map<string, string>): void {
  if (Array.isArray(node)) {
    if (node.length === 0) into.set(`${object} ${path}`, '[]');
    const key = ITEM_KEYS.find(
      (candidate) =>
        node.every((item) => item !== null && typeof item === 'object' && !Array.isArray(item) && candidate in item) &&
        new Set(node.map((item) => JSON.stringify((item as Record<string, unknown>)[candidate]))).size === node.length,
    );
    node.forEach((item, i) => {
      const label = key ? `${key}=${String((item as Record<string, unknown>)[key])}` : String(i);
      walk(item, object, `${path}[${label}]`, into, renames);
    });
    return;
  }
  if (node !== null && typeof node === 'object') {
    const entries = Object.entries(node);
    if (entries.length === 0) into.set(`${object} ${path}`, '{}');
    for (const [key, value] of entries) walk(value, object, path === '' ? key : `${path}.${key}`, into, renames);
    return;
  }
  const value = typeof node === 'string' ? (renames.get(node) ?? node) : node;
  into.set(`${object} ${path}`, JSON.stringify(value));
}

/** Fields whose value differs between two renders (present on one side only included). */
function changedFields(before: Fields, after: Fields): string[] {
  const keys = new Set([...before.keys(), ...after.keys()]);
  return [...keys].filter((key) => before.get(key) !== after.get(key)).sort();
}

function isKept(field: string, keeps: readonly string[]): boolean {
  return keeps.some((keep) => field === keep || field.startsWith(`${keep}.`) || field.startsWith(`${keep}[`));
}

const renders = new Map<string, Promise<Record<Side, Fields>>>();

function rendersOf(c: GoldenCase): Promise<Record<Side, Fields>> {
  let pending = renders.get(c.name);
  if (!pending) {
    pending = Promise.all(SIDES.map((side) => renderSide(c, side))).then(
      ([xBefore, xAfter, yNow, yExpected]) =>
        ({ 'x-before': xBefore, 'x-after': xAfter, 'y-now': yNow, 'y-expected': yExpected }) as Record<Side, Fields>,
    );
    // Awaited by the case's own test; a failure there is that case's failure.
    pending.catch(() => undefined);
    renders.set(c.name, pending);
  }
  return pending;
}

beforeAll(() => {
  for (const c of cases) void rendersOf(c);
});

// ---------------------------------------------------------------------------------------------

describe('config promotion corpus layout', () => {
  it('holds at least 60 cases, about one in seven refused and one in seven keeping values of Y', () => {
    expect(cases.length).toBeGreaterThanOrEqual(60);
    const outcomes = (c: GoldenCase): string[] => Object.values(c.meta.files).map((file) => file.outcome);
    const refused = cases.filter((c) => outcomes(c).includes('refused')).length;
    const keeping = cases.filter((c) => Object.values(c.meta.files).some((file) => file.kept.length > 0)).length;
    expect(refused / cases.length).toBeGreaterThanOrEqual(0.13);
    expect(keeping / cases.length).toBeGreaterThanOrEqual(0.13);
  });

  it.each(cases)('$name: y-expected agrees with the outcomes case.yaml names', (c) => {
    for (const path of Object.keys(c.meta.files)) expect(c.paths, `case.yaml names ${path}, no side has it`).toContain(path);
    for (const path of c.paths) {
      const expected = expectationOf(c, path);
      const now = bytesOf(c, 'y-now', path);
      const after = bytesOf(c, 'y-expected', path);
      const where = `${path} (${expected.outcome})`;
      switch (expected.outcome) {
        case 'edited':
          expect(now, where).toBeDefined();
          expect(after, where).toBeDefined();
          expect(sameBytes(now, after), where).toBe(false);
          break;
        case 'created':
          expect(now, where).toBeUndefined();
          expect(after, where).toBeDefined();
          break;
        case 'deleted':
          expect(now, where).toBeDefined();
          expect(after, where).toBeUndefined();
          break;
        default:
          expect(sameBytes(now, after), where).toBe(true);
      }
      expect(expected.outcome === 'refused', where).toBe(expected.refusals.length > 0);
      if (expected.outcome === 'kept') expect(expected.kept.length, where).toBeGreaterThan(0);
      if (expected.outcome === 'unchanged' || expected.outcome === 'refused') expect(expected.kept, where).toEqual([]);
    }
  });
});

describe.each(cases)('$name', (c) => {
  it('the planner writes y-expected, with the outcomes, kept lines and refusal lines case.yaml names', () => {
    const inputs: ConfigFileInput[] = c.paths.map((path) => ({
      path,
      sourceBefore: textOf(c, 'x-before', path),
      sourceAfter: textOf(c, 'x-after', path),
      target: textOf(c, 'y-now', path),
    }));
    const plan = planConfigPromotion(inputs);
    expect(plan.files.map((file) => file.path).sort()).toEqual(c.paths);
    const byPath = new Map<string, ConfigFilePlan>(plan.files.map((file) => [file.path, file]));
    const seen = c.paths.map((path) => {
      const file = byPath.get(path) as ConfigFilePlan;
      return {
        path,
        outcome: file.outcome,
        refusals: file.refusals.map((r) => `${r.file}:${r.line}`).sort(),
        kept: file.kept.map((k) => k.line).sort((a, b) => a - b),
        // What the plan leaves in Y: its new text, nothing when it deletes, else Y's text as it is.
        result:
          file.outcome === 'edited' || file.outcome === 'created'
            ? file.text
            : file.outcome === 'deleted'
              ? undefined
              : textOf(c, 'y-now', path),
      };
    });
    const wanted = c.paths.map((path) => {
      const expected = expectationOf(c, path);
      return {
        path,
        outcome: expected.outcome,
        refusals: expected.refusals.map((r) => `${r.file}:${r.line}`).sort(),
        kept: expected.kept.map((k) => k.line).sort((a, b) => a - b),
        result: textOf(c, 'y-expected', path),
      };
    });
    expect(seen).toEqual(wanted);
    // Byte for byte, not only as decoded text.
    for (const entry of seen)
      expect(
        sameBytes(
          entry.result === undefined ? undefined : Buffer.from(entry.result, 'utf8'),
          bytesOf(c, 'y-expected', entry.path),
        ),
        entry.path,
      ).toBe(true);
    for (const file of plan.files) {
      // A created file is its whole text; the contract does not say it lists edits.
      if (file.outcome === 'edited') expect(file.edits.length, file.path).toBeGreaterThan(0);
      if (file.outcome === 'unchanged' || file.outcome === 'refused') expect(file.edits, file.path).toEqual([]);
    }
  });

  it("renders Y's change as X's, apart from what Y keeps", async () => {
    const rendered = await rendersOf(c);
    const xChanged = changedFields(rendered['x-before'], rendered['x-after']);
    const yChanged = changedFields(rendered['y-now'], rendered['y-expected']);
    expect(xChanged.length, "X's change renders to nothing: the case proves nothing").toBeGreaterThan(0);
    const refused = Object.values(c.meta.files).some((file) => file.outcome === 'refused');
    if (refused) {
      expect(yChanged).toEqual([]);
      return;
    }
    const keeps = c.meta.render.keeps;
    const show = (fields: Fields, field: string): string => fields.get(field) ?? '(absent)';
    const wrong = xChanged.flatMap((field) => {
      const want = isKept(field, keeps) ? show(rendered['y-now'], field) : show(rendered['x-after'], field);
      const got = show(rendered['y-expected'], field);
      return got === want ? [] : [`${field}: Y expected renders ${got}, wanted ${want}`];
    });
    const stray = yChanged
      .filter((field) => !xChanged.includes(field))
      .map((field) => `${field}: Y moved it (${show(rendered['y-now'], field)} → ${show(rendered['y-expected'], field)}), X did not`);
    const staleKeeps = keeps.filter((keep) => !xChanged.some((field) => isKept(field, [keep])));
    expect({ wrong, stray, staleKeeps }).toEqual({ wrong: [], stray: [], staleKeeps: [] });
  });
});

describe('config promotion cases the planner does not write yet (config-promote-pending/)', () => {
  const pending = loadCases(PENDING);
  it('are there to be learned: at least one', () => {
    expect(pending.length).toBeGreaterThan(0);
  });
  it.each(pending.map((c) => [c.name, c] as const))(
    '%s: refused with a line, never approximated (move it to config-promote/ once the planner writes it)',
    (_name, c) => {
      const plan = planConfigPromotion(
        c.paths.map((path) => ({
          path,
          sourceBefore: textOf(c, 'x-before', path),
          sourceAfter: textOf(c, 'x-after', path),
          target: textOf(c, 'y-now', path),
        })),
      );
      const changed = c.paths.filter((path) => !sameBytes(bytesOf(c, 'y-now', path), bytesOf(c, 'y-expected', path)));
      const files = plan.files.filter((file) => changed.includes(file.path));
      // Every file the case changes is either written exactly as a careful person would, or refused with a line.
      for (const file of files) {
        if (file.outcome === 'refused') {
          expect(file.text).toBeUndefined();
          expect(file.refusals.length).toBeGreaterThan(0);
          expect(file.refusals.every((refusal) => refusal.line >= 1)).toBe(true);
        } else {
          expect(file.outcome === 'deleted' ? undefined : file.text).toBe(textOf(c, 'y-expected', file.path));
        }
      }
      // Still pending: some file is refused. When none is, the planner has learned the case.
      expect(files.some((file) => file.outcome === 'refused')).toBe(true);
    },
  );
});
