/**
 * Golden corpus of the image editor: `test/golden/edit/<NNN-name>/`.
 *
 * Every case holds `case.json`, `input/<file>` and, when the edit changes the file,
 * `expected/<file>` written by hand from the editing rules (never by running the editor).
 * The output must equal `expected/` byte for byte (CRLF, BOM and missing final newlines
 * included; `.gitattributes` marks the corpus `-text` so git keeps those bytes).
 */
import { existsSync, readdirSync, readFileSync, type Dirent } from 'node:fs';
import { join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  addImageEntry,
  editImages,
  kustomizationSiblings,
  kustomizeViews,
  listImages,
  missingImageEntries,
} from '../src/planners/image-edit/index.js';
import { normalizeName } from '../src/planners/image-ref.js';
import type { ImageEvent } from '../src/planners/image-edit/index.js';

const CORPUS = fileURLToPath(new URL('./golden/edit/', import.meta.url));

const CaseMeta = z.strictObject({
  /** Path of the edited file inside input/ and expected/, also passed as `options.path`. */
  file: z.string().min(1),
  /** The pushed image, `repository:tag[@digest]`. */
  image: z.string().min(1),
  pinDigest: z.boolean(),
  /** changed: output equals expected/; unchanged: image present and current; ignored: image not mentioned. */
  expect: z.enum(['changed', 'unchanged', 'refused', 'ignored']),
  /** Substring of one refusal reason (refused cases only), compared case-insensitively. */
  reason: z.string().min(1).optional(),
  /**
   * Changed cases that leave entries as they were: one substring per entry left (its reason),
   * compared case-insensitively, in the order the editor reports them (by line).
   */
  left: z.array(z.string().min(1)).optional(),
  /** File kind the editor must report, when the case asserts one. */
  kind: z.enum(['kustomize', 'helm-values', 'manifest', 'argocd-application', 'argocd-source', 'unknown']).optional(),
  /** Flux policies the configuration maps to images (`images[].fluxPolicies`), passed as `options.fluxPolicies`. */
  fluxPolicies: z.record(z.string(), z.string()).optional(),
  /**
   * `environments[].addImages` cases: the name the new `images:` entry takes. The case asserts
   * that the file renders the image (with its resources/) without an entry, under that name, and
   * that `addImageEntry` writes expected/.
   */
  addEntry: z.string().min(1).optional(),
  /** `images[].helmDottedKeys` of the pushed image, passed as `options.dottedKeys`. */
  dottedKeys: z.boolean().optional(),
  /** Which edge case this proves. */
  about: z.string().min(1),
  /** The peer test the case is taken from or modelled on: repository, file and test name. */
  peer: z.string().min(1).optional(),
  /**
   * Where the case's file holds Helm values in a string (`helm.values: |`, a ConfigMap's
   * `values.yaml: |`): the path of that string, document index first in a multi-document file.
   * Read by golden-helm.test.ts, which renders the string as the values file.
   */
  valuesIn: z.array(z.union([z.string(), z.number()])).optional(),
  /** Read by golden-kustomize.test.ts only. */
  render: z.array(z.string()).optional(),
  noRender: z.string().min(1).optional(),
  buildError: z.string().min(1).optional(),
});

interface GoldenCase extends z.infer<typeof CaseMeta> {
  name: string;
  dir: string;
}

function loadCases(): GoldenCase[] {
  return readdirSync(CORPUS, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => entry.name)
    .sort()
    .map((name) => {
      const dir = join(CORPUS, name);
      const parsed = CaseMeta.safeParse(JSON.parse(readFileSync(join(dir, 'case.json'), 'utf8')));
      if (!parsed.success) {
        throw new Error(`test/golden/edit/${name}/case.json is invalid; fix it:\n${z.prettifyError(parsed.error)}`);
      }
      return { ...parsed.data, name, dir };
    });
}

/**
 * Splits `repo:tag@digest`: the digest after `@`, then the tag after the last `:` that follows
 * the last `/` (so `localhost:5000/app:1.0` keeps its port in the repository).
 */
function toEvent(image: string): ImageEvent {
  const at = image.indexOf('@');
  const ref = at === -1 ? image : image.slice(0, at);
  const colon = ref.lastIndexOf(':');
  if (colon === -1 || colon < ref.lastIndexOf('/')) {
    throw new Error(`golden image ${image} has no tag; write it as repository:tag[@digest]`);
  }
  const event: ImageEvent = { repository: ref.slice(0, colon), tag: ref.slice(colon + 1) };
  if (at !== -1) event.digest = image.slice(at + 1);
  return event;
}

/** Every file under the case's resources/, with its path relative to that folder. */
function resourceFiles(dir: string): Array<{ path: string; text: string }> {
  const root = join(dir, 'resources');
  if (!existsSync(root)) return [];
  return (readdirSync(root, { recursive: true, withFileTypes: true }) as Dirent[])
    .filter((entry) => entry.isFile())
    .map((entry) => {
      const full = join(entry.parentPath, entry.name);
      return { path: relative(root, full).split(sep).join('/'), text: readFileSync(full, 'utf8') };
    });
}

const cases = loadCases();

describe('golden corpus layout', () => {
  it('holds at least 100 cases with unique short names', () => {
    expect(cases.length).toBeGreaterThanOrEqual(100);
    const shortNames = cases.map((c) => c.name.replace(/^\d+-/, ''));
    expect(new Set(shortNames).size).toBe(shortNames.length);
  });

  it.each(cases)('$name is well formed', (c) => {
    expect(existsSync(join(c.dir, 'input', c.file))).toBe(true);
    const hasExpected = existsSync(join(c.dir, 'expected'));
    expect(hasExpected).toBe(c.expect === 'changed');
    expect(c.reason !== undefined).toBe(c.expect === 'refused');
    if (c.left !== undefined) expect(c.expect).toBe('changed');
    if (c.expect === 'changed') {
      const input = readFileSync(join(c.dir, 'input', c.file));
      const expected = readFileSync(join(c.dir, 'expected', c.file));
      expect(expected.equals(input)).toBe(false);
    }
  });

  it('splits image references like the editor receives them', () => {
    expect(toEvent('localhost:5000/example/hello:1.4.0')).toEqual({
      repository: 'localhost:5000/example/hello',
      tag: '1.4.0',
    });
    expect(toEvent('nginx:1.27.1@sha256:abc')).toEqual({ repository: 'nginx', tag: '1.27.1', digest: 'sha256:abc' });
  });
});

describe('addImageEntry golden cases (environments[].addImages)', () => {
  describe.each(cases.filter((c) => c.addEntry !== undefined))('$name', (c) => {
    it(`${c.expect}: ${c.about}`, () => {
      const inputBytes = readFileSync(join(c.dir, 'input', c.file));
      const input = inputBytes.toString('utf8');
      const event = toEvent(c.image);
      const files = [{ path: c.file, text: input }, ...resourceFiles(c.dir)];
      // The file names no entry for the image, and renders it under the entry's name.
      expect(editImages(input, event, { path: c.file, pinDigest: c.pinDigest }).mentions).toBe(false);
      const missing = missingImageEntries(files, [c.file], normalizeName(event.repository) ?? '', (file) =>
        listImages(file.text, { path: file.path }).uses.map((use) => use.written),
      );
      expect(missing.get(c.file)).toBe(c.addEntry);
      const result = addImageEntry(input, event, { path: c.file, name: c.addEntry ?? '', pinDigest: c.pinDigest });
      if (c.expect === 'refused') {
        expect(result.text).toBe(input);
        expect(
          result.refused
            .map((r) => r.reason)
            .join(' | ')
            .toLowerCase(),
        ).toContain((c.reason ?? '').toLowerCase());
        return;
      }
      const expectedBytes = readFileSync(join(c.dir, 'expected', c.file));
      expect(result.refused).toEqual([]);
      expect(JSON.stringify(result.text)).toBe(JSON.stringify(expectedBytes.toString('utf8')));
      expect(Buffer.from(result.text, 'utf8').equals(expectedBytes)).toBe(true);
      expect(result.changed.map((change) => change.path)).toContain(`${result.changed[0]?.path.split('.')[0]}.newTag`);
    });
  });
});

describe('editImages golden cases', () => {
  describe.each(cases.filter((c) => c.addEntry === undefined))('$name', (c) => {
    const inputPath = join(c.dir, 'input', c.file);

    it(`${c.expect}: ${c.about}`, () => {
      const inputBytes = readFileSync(inputPath);
      // readFileSync(…, 'utf8') keeps a BOM as \uFEFF, so the editor sees the file's exact text.
      const input = inputBytes.toString('utf8');
      // The case's resources/ are the other files of the checkout: kustomizations among them decide
      // what the edited file renders as.
      const files = [{ path: c.file, text: input }, ...resourceFiles(c.dir)];
      const views = kustomizeViews(files).get(c.file) ?? [];
      const siblings = kustomizationSiblings(files.map((file) => file.path)).get(c.file) ?? [];
      const result = editImages(input, toEvent(c.image), {
        path: c.file,
        pinDigest: c.pinDigest,
        views,
        siblings,
        ...(c.fluxPolicies ? { fluxPolicies: c.fluxPolicies } : {}),
        ...(c.dottedKeys !== undefined ? { dottedKeys: c.dottedKeys } : {}),
      });

      if (c.expect === 'changed') {
        const expectedBytes = readFileSync(join(c.dir, 'expected', c.file));
        expect(result.refused).toEqual([]);
        // String comparison first for a readable diff, then the bytes themselves.
        expect(JSON.stringify(result.text)).toBe(JSON.stringify(expectedBytes.toString('utf8')));
        expect(Buffer.from(result.text, 'utf8').equals(expectedBytes)).toBe(true);
        expect(result.mentions).toBe(true);
        expect(result.unchanged).toBe(false);
        expect(result.changed.length).toBeGreaterThan(0);
        const left = result.left.map((l) => `${l.line ?? '?'}: ${l.reason}`);
        expect(left.length, `left: ${left.join(' | ')}`).toBe(c.left?.length ?? 0);
        (c.left ?? []).forEach((reason, i) => {
          expect(left[i]?.toLowerCase()).toContain(reason.toLowerCase());
          expect(result.left[i]?.line).toBeGreaterThan(0);
        });
        if (c.kind !== undefined) expect(result.kind).toBe(c.kind);
        return;
      }

      // Every other outcome leaves the file byte-identical.
      expect(JSON.stringify(result.text)).toBe(JSON.stringify(input));
      expect(Buffer.from(result.text, 'utf8').equals(inputBytes)).toBe(true);
      expect(result.changed).toEqual([]);
      expect(result.left).toEqual([]);

      if (c.expect === 'refused') {
        expect(result.refused.length).toBeGreaterThan(0);
        const reasons = result.refused.map((r) => r.reason.toLowerCase());
        expect(
          reasons.some((r) => r.includes((c.reason ?? '').toLowerCase())),
          `reasons: ${reasons.join(' | ')}`,
        ).toBe(true);
      } else {
        expect(result.refused).toEqual([]);
        expect(result.unchanged).toBe(c.expect === 'unchanged');
        expect(result.mentions).toBe(c.expect === 'unchanged');
      }
      if (c.kind !== undefined) expect(result.kind).toBe(c.kind);
    });
  });
});
