/**
 * `escalator set-image` over the golden corpus (test/golden/edit): each case's input file and its
 * resources/ are laid out in a fresh directory and the command runs on it as a person would. Every
 * refused case exits 2 and prints the file, the line and the reason; every changed case leaves the
 * file equal to expected/ byte for byte (entries left beside it exit 2 and print `left:`); every
 * other case leaves the file as it was.
 */
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.js';

const CORPUS = fileURLToPath(new URL('../golden/edit/', import.meta.url));
const workspace = mkdtempSync(join(tmpdir(), 'escalator-set-image-golden-'));
afterAll(() => rmSync(workspace, { recursive: true, force: true }));

interface GoldenCase {
  name: string;
  file: string;
  image: string;
  pinDigest: boolean;
  expect: 'changed' | 'unchanged' | 'refused' | 'ignored';
  reason?: string;
  left?: string[];
  addEntry?: string;
  fluxPolicies?: Record<string, string>;
  dottedKeys?: boolean;
  about: string;
}

const cases: GoldenCase[] = readdirSync(CORPUS, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => ({
    name: entry.name,
    ...(JSON.parse(readFileSync(join(CORPUS, entry.name, 'case.json'), 'utf8')) as Omit<GoldenCase, 'name'>),
  }))
  .sort((a, b) => a.name.localeCompare(b.name));

function stage(c: GoldenCase): string {
  const root = join(workspace, c.name);
  mkdirSync(root, { recursive: true });
  const resources = join(CORPUS, c.name, 'resources');
  if (existsSync(resources)) cpSync(resources, root, { recursive: true });
  mkdirSync(dirname(join(root, c.file)), { recursive: true });
  writeFileSync(join(root, c.file), readFileSync(join(CORPUS, c.name, 'input', c.file)));
  return root;
}

async function setImage(c: GoldenCase, cwd: string) {
  let stdout = '';
  let stderr = '';
  const argv = ['set-image', c.image, c.file];
  // As the App: a digest given is written where a file pins one, and added only with --pin-digest.
  if (c.image.includes('@') && c.pinDigest) argv.push('--pin-digest');
  if (c.fluxPolicies) {
    const policies = Object.entries(c.fluxPolicies)
      .filter(([, image]) => c.image.startsWith(`${image}:`) || c.image.startsWith(`${image}@`))
      .map(([policy]) => policy);
    if (policies.length > 0) argv.push('--flux-policy', policies.join(','));
  }
  if (c.dottedKeys) argv.push('--helm-dotted-keys');
  if (c.addEntry) argv.push('--add-entries');
  const code = await runCli(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd });
  return { code, stdout, stderr };
}

// Renders across files (mirror renames) need the other kustomizations in the command's paths,
// which would edit them too: those cases are the editor's (golden-edit.test.ts) alone.
const standalone = cases.filter((c) => !existsSync(join(CORPUS, c.name, 'resources')) || c.addEntry !== undefined);

describe('escalator set-image on the golden corpus', () => {
  it('runs on most of the corpus', () => {
    expect(standalone.length).toBeGreaterThan(150);
  });

  it.each(standalone.filter((c) => c.expect === 'refused'))('$name exits 2 with the reason', async (c) => {
    const root = stage(c);
    const result = await setImage(c, root);
    expect(result.code).toBe(2);
    expect(readFileSync(join(root, c.file)).equals(readFileSync(join(CORPUS, c.name, 'input', c.file)))).toBe(true);
    // An image no registry would send (an invalid tag) is refused as an argument, before any file.
    if (result.stderr.startsWith('escalator set-image: ')) {
      expect(result.stderr).toContain(`"${c.image}" is not a valid image reference`);
      return;
    }
    const lines = result.stderr.split('\n').filter((line) => line.startsWith(`${c.file}`));
    expect(lines.length, result.stderr).toBeGreaterThan(0);
    // The command line says "the image given has none" where an event "carries none".
    const reason = (c.reason ?? '').toLowerCase().replace('the event carries none', 'the image given has none');
    expect(
      lines.some((line) => line.toLowerCase().includes(reason)),
      result.stderr,
    ).toBe(true);
    expect(readFileSync(join(root, c.file)).equals(readFileSync(join(CORPUS, c.name, 'input', c.file)))).toBe(true);
  });

  it.each(standalone.filter((c) => c.expect === 'changed'))('$name writes expected/', async (c) => {
    const root = stage(c);
    const result = await setImage(c, root);
    expect(result.code, result.stderr).toBe(c.left ? 2 : 0);
    expect(result.stderr.split('\n').filter((line) => line.includes(': left: ')).length).toBe(c.left?.length ?? 0);
    expect(readFileSync(join(root, c.file), 'utf8')).toBe(
      readFileSync(join(CORPUS, c.name, 'expected', c.file), 'utf8'),
    );
  });

  it.each(standalone.filter((c) => c.expect === 'unchanged' || c.expect === 'ignored'))(
    '$name leaves the file as it is',
    async (c) => {
      const root = stage(c);
      const result = await setImage(c, root);
      expect(result.code).toBe(c.expect === 'unchanged' ? 0 : 2);
      expect(readFileSync(join(root, c.file)).equals(readFileSync(join(CORPUS, c.name, 'input', c.file)))).toBe(true);
    },
  );
});
