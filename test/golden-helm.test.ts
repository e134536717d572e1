/**
 * Helm values edits checked by helm itself. For every Helm values case of the editor's golden
 * corpus (`test/golden/edit/*` with `"kind": "helm-values"`, or with `valuesIn`: Helm values held
 * in a string of the file, written out as a values file of their own), the values are rendered
 * with `helm template` before the edit (`input/`) and after it (`expected/`; the input again when
 * the case expects no change), under helm 3.17 and helm 4.1 (scripts/fetch-helm.sh). The rendered
 * container images must differ exactly where the edit meant them to: for a `changed` case at
 * least one `image:` string changes and every one that changes is the pushed image at its new
 * version; for every other case no `image:` string changes. This proves what the values mean to
 * helm (for example that `tag: "1.10"` renders `:1.10` where `tag: 1.10` rendered `:1.1`), which
 * re-parsing the YAML alone does not.
 *
 * The chart is the case's own `chart/` folder when it has one, else the shared
 * test/fixtures/helm-image-chart, which renders every image the values name the way charts
 * commonly read them (a string under a key ending in `image`; a `[registry/]repository:tag@digest`
 * or `name`/`tag` map). Each container is named by its values path, so a change is placed.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { normalizeName, parseImageRef, splitReference } from '../src/planners/image-ref.js';
import { goldenRenderEnv } from './support/golden-renders.js';
import { HELM_VERSIONS, helmBinary } from './support/helm-binaries.js';

const CORPUS = fileURLToPath(new URL('./golden/edit/', import.meta.url));
const SHARED_CHART = fileURLToPath(new URL('./fixtures/helm-image-chart/', import.meta.url));

const CaseMeta = z.object({
  file: z.string().min(1),
  image: z.string().min(1),
  expect: z.enum(['changed', 'unchanged', 'refused', 'ignored']),
  kind: z.string().optional(),
  about: z.string().min(1),
  valuesIn: z.array(z.union([z.string(), z.number()])).optional(),
});

interface HelmCase extends z.infer<typeof CaseMeta> {
  name: string;
  dir: string;
}

const cases: HelmCase[] = readdirSync(CORPUS, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort()
  .map((name) => {
    const dir = join(CORPUS, name);
    return { ...CaseMeta.passthrough().parse(JSON.parse(readFileSync(join(dir, 'case.json'), 'utf8'))), name, dir };
  })
  .filter((c) => c.kind === 'helm-values' || c.valuesIn !== undefined);

const workspace = mkdtempSync(join(tmpdir(), 'escalator-golden-helm-'));
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

/**
 * The values file helm reads: the case's file, or, for values held in a string of it (`valuesIn`:
 * an Argo CD `helm.values`, a ConfigMap's `values.yaml`), that string written to a file of its own.
 */
function valuesFile(c: HelmCase, version: 'input' | 'expected'): string {
  const file = join(c.dir, c.expect === 'changed' ? version : 'input', c.file);
  if (c.valuesIn === undefined) return file;
  const docs = parseAllDocuments(readFileSync(file, 'utf8')).map((doc) => doc.toJS() as unknown);
  const [first, ...rest] = c.valuesIn;
  let node: unknown = typeof first === 'number' ? docs[first] : (docs[0] as Record<string, unknown>)[first ?? ''];
  for (const key of rest) node = (node as Record<string | number, unknown>)[key];
  if (typeof node !== 'string') throw new Error(`${c.name}: valuesIn does not lead to a string`);
  const out = join(workspace, `${c.name}-${version}.yaml`);
  writeFileSync(out, node);
  return out;
}

/** Whether `rendered` is the case's pushed image at its new version (tag and digest, as the values pin it). */
function isPushedImage(rendered: string, image: string): boolean {
  const pushed = parseImageRef(image);
  const parts = splitReference(rendered);
  if (!pushed.ok || normalizeName(parts.name) !== normalizeName(splitReference(image).name)) return false;
  if (parts.tag !== undefined && parts.tag !== pushed.ref.tag) return false;
  if (parts.digest !== undefined && parts.digest !== pushed.ref.digest) return false;
  return parts.tag !== undefined || parts.digest !== undefined;
}

type Rendered = { images: Map<string, string> } | { error: string };

/** `helm template` of the case's chart with one version of its values file: container name (values path) → image. */
function render(helm: string, c: HelmCase, version: 'input' | 'expected'): Rendered {
  const values = valuesFile(c, version);
  const chart = existsSync(join(c.dir, 'chart')) ? join(c.dir, 'chart') : SHARED_CHART;
  let output: string;
  try {
    output = execFileSync(helm, ['template', 'golden', chart, '--values', values], {
      encoding: 'utf8',
      timeout: 30_000,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { PATH: process.env.PATH ?? '', HOME: '/nonexistent', HELM_CACHE_HOME: '/nonexistent', ...goldenRenderEnv },
    });
  } catch (error) {
    const stderr = String((error as { stderr?: unknown }).stderr ?? error);
    return { error: stderr.split(values).join('<values>').trim() };
  }
  const images = new Map<string, string>();
  for (const doc of parseAllDocuments(output)) {
    if (doc.errors.length > 0) throw new Error(`helm printed YAML that does not parse: ${doc.errors[0]?.message}`);
    const pod = doc.toJS() as { spec?: { containers?: Array<{ name: string; image: string }> | null } } | null;
    for (const container of pod?.spec?.containers ?? []) images.set(container.name, container.image);
  }
  return { images };
}

describe('Helm values edits of the golden corpus, rendered by helm', () => {
  it('the corpus has Helm values cases of every expectation', () => {
    expect(new Set(cases.map((c) => c.expect))).toEqual(new Set(['changed', 'unchanged', 'refused', 'ignored']));
  });

  describe.each(HELM_VERSIONS)('helm %s', (helmVersion) => {
    it.each(cases.map((c) => [c.name, c] as const))('%s', (_name, c) => {
      const helm = helmBinary(helmVersion);
      const before = render(helm, c, 'input');
      const after = render(helm, c, 'expected');
      if ('error' in before || 'error' in after) {
        // helm refuses the values file: only a file the editor left alone may be one helm refuses.
        expect(c.expect, `helm refuses ${c.file}: ${'error' in after ? after.error : ''}`).not.toBe('changed');
        expect(after).toEqual(before);
        return;
      }
      expect([...after.images.keys()], 'the edit neither adds nor removes an image').toEqual([...before.images.keys()]);
      const changed = [...after.images].filter(([path, image]) => before.images.get(path) !== image);
      if (c.expect === 'changed') {
        expect(changed.length, 'at least one rendered image changes').toBeGreaterThan(0);
        for (const [path, image] of changed)
          expect(isPushedImage(image, c.image), `${path}: ${before.images.get(path)} → ${image} is ${c.image}`).toBe(
            true,
          );
      } else {
        expect(changed, `a case that expects ${c.expect} changes no rendered image`).toEqual([]);
      }
    });
  });
});
