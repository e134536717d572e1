/**
 * Render check of the golden corpus: every changed kustomization in `test/golden/edit/`, and every
 * case that lists `render`, is built with the real kustomize (`kustomize build`, else
 * `kubectl kustomize`) together with the case's `resources/` tree, before and after the edit. The
 * rendered container images after the edit must be exactly the ones the case lists in `render`,
 * and every image that differs from the render before the edit must be the pushed image at its
 * new version: exactly the intended `image:` strings changed. This proves the expected files mean
 * what they claim to Kustomize itself (for example that `newTag: "1.10"` renders `:1.10`, not
 * `:1.1`). A case whose input kustomize refuses to build names the error in `buildError`.
 *
 * A changed kustomization that cannot be built on its own (a Component) says why in `noRender`;
 * no case is skipped silently.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { z } from 'zod';
import { normalizeName, parseImageRef, splitReference } from '../src/planners/image-ref.js';
import { goldenRenderEnv } from './support/golden-renders.js';

const CORPUS = fileURLToPath(new URL('./golden/edit/', import.meta.url));

const CaseMeta = z.object({
  file: z.string().min(1),
  image: z.string().min(1),
  expect: z.enum(['changed', 'unchanged', 'refused', 'ignored']),
  about: z.string().min(1),
  render: z.array(z.string()).optional(),
  noRender: z.string().min(1).optional(),
  buildError: z.string().min(1).optional(),
});

interface RenderCase extends z.infer<typeof CaseMeta> {
  name: string;
  dir: string;
}

/** Kustomize recognises exactly these three file names. */
function isKustomization(file: string): boolean {
  return /(^|\/)(kustomization\.ya?ml|Kustomization)$/.test(file);
}

const allCases: RenderCase[] = readdirSync(CORPUS, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort()
  .map((name) => {
    const dir = join(CORPUS, name);
    return { ...CaseMeta.parse(JSON.parse(readFileSync(join(dir, 'case.json'), 'utf8'))), name, dir };
  });
const changedKustomizations = allCases.filter((c) => c.expect === 'changed' && isKustomization(c.file));

const renderable = allCases.filter((c) => c.render !== undefined || c.buildError !== undefined);

/** Whether `rendered` is the case's pushed image at its new version (tag and digest, as the file pins it). */
function isPushedImage(rendered: string, image: string): boolean {
  const pushed = parseImageRef(image);
  const parts = splitReference(rendered);
  if (!pushed.ok || normalizeName(parts.name) !== normalizeName(splitReference(image).name)) return false;
  if (parts.tag !== undefined && parts.tag !== pushed.ref.tag) return false;
  if (parts.digest !== undefined && parts.digest !== pushed.ref.digest) return false;
  return parts.tag !== undefined || parts.digest !== undefined;
}

function hasBinary(command: string, args: string[]): boolean {
  try {
    execFileSync(command, args, { stdio: 'ignore', timeout: 10_000 });
    return true;
  } catch {
    return false;
  }
}

/** `kustomize build` when installed, else the kustomize embedded in kubectl. */
const build: [string, string[]] = hasBinary('kustomize', ['version'])
  ? ['kustomize', ['build']]
  : ['kubectl', ['kustomize']];

/** The directory kustomize builds: the file's own when it is a kustomization, else the staged root. */
function buildDir(root: string, file: string): string {
  return isKustomization(file) ? join(root, dirname(file)) : root;
}

function renderImages(root: string, file: string): string[] {
  const [command, args] = build;
  const output = execFileSync(command, [...args, buildDir(root, file)], {
    encoding: 'utf8',
    timeout: 20_000,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...goldenRenderEnv },
  });
  const images: string[] = [];
  for (const doc of parseAllDocuments(output)) {
    if (doc.errors.length > 0)
      throw new Error(`${command} printed YAML that does not parse: ${doc.errors[0]?.message}`);
    collectImages(doc.toJS(), images);
  }
  return images;
}

/** Container images in document order: every `containers` / `initContainers` list at any depth. */
function collectImages(node: unknown, into: string[]): void {
  if (Array.isArray(node)) {
    for (const item of node) collectImages(item, into);
    return;
  }
  if (node === null || typeof node !== 'object') return;
  for (const [key, value] of Object.entries(node)) {
    if ((key === 'containers' || key === 'initContainers') && Array.isArray(value)) {
      for (const container of value) {
        const image: unknown = (container as { image?: unknown }).image;
        if (typeof image === 'string') into.push(image);
      }
    } else {
      collectImages(value, into);
    }
  }
}

const workspace = mkdtempSync(join(tmpdir(), 'escalator-golden-kustomize-'));
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

/** Copies the case's resources/ tree and one version (input or expected) of the file into a fresh dir. */
function stage(c: RenderCase, version: 'input' | 'expected'): string {
  if (version === 'expected' && c.expect !== 'changed') return stage(c, 'input');
  const root = join(workspace, `${c.name}-${version}`);
  if (existsSync(root)) return root;
  mkdirSync(root, { recursive: true });
  const resources = join(c.dir, 'resources');
  if (existsSync(resources)) cpSync(resources, root, { recursive: true });
  const target = join(root, c.file);
  mkdirSync(dirname(target), { recursive: true });
  writeFileSync(target, readFileSync(join(c.dir, version, c.file)));
  return root;
}

/**
 * The images of one version of a case, rendered once: the case's two tests both read the expected
 * render, and an unchanged case's expected version is its input.
 */
const rendered = new Map<string, string[]>();
function imagesOf(c: RenderCase, version: 'input' | 'expected'): string[] {
  const root = stage(c, version);
  let images = rendered.get(root);
  if (images === undefined) {
    images = renderImages(root, c.file);
    rendered.set(root, images);
  }
  return images;
}

describe('golden kustomizations render with kustomize', () => {
  it('every changed kustomization either lists its rendered images or says why it cannot render', () => {
    expect(changedKustomizations.length).toBeGreaterThan(0);
    const unaccounted = changedKustomizations
      .filter((c) => (c.render === undefined) === (c.noRender === undefined))
      .map((c) => c.name);
    expect(unaccounted).toEqual([]);
  });

  describe.each(renderable)('$name', (c) => {
    if (c.buildError !== undefined) {
      it(`kustomize refuses the input: ${c.buildError}`, () => {
        expect(() => renderImages(stage(c, 'input'), c.file)).toThrow(c.buildError);
      });
    } else {
      it('builds before the edit, and only the pushed image changed', () => {
        const before = imagesOf(c, 'input');
        const after = imagesOf(c, 'expected');
        expect(after).toHaveLength(before.length);
        const moved = after.filter((image, i) => image !== before[i]);
        expect(moved.every((image) => isPushedImage(image, c.image))).toBe(true);
        expect(moved.length > 0).toBe(c.expect === 'changed');
      });
    }

    if (c.render !== undefined)
      it(`renders ${c.render.join(', ')}`, () => {
        expect(imagesOf(c, 'expected')).toEqual(c.render);
      });
  });
});
