import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll } from 'vitest';

/** What dependency-cruiser reports (`--output-type json`), the parts the architecture tests read. */
export interface Cruised {
  modules: Array<{ source: string; dependencies: Array<{ resolved: string }> }>;
  summary: { violations: Array<{ rule: { name: string }; from: string; to: string }> };
}

const root = fileURLToPath(new URL('../../..', import.meta.url));
let scratch: string | undefined;
let copies = 0;

/**
 * Run dependency-cruiser with the product's rules over a copy of src/ and packages/ (the simulator)
 * plus `planted` files (a
 * check that has never failed is not known to work). Call it from a test file: the copies are
 * removed after its tests.
 */
export function cruise(planted: Record<string, string>): Cruised {
  if (!scratch) {
    const made = mkdtempSync(join(tmpdir(), 'escalator-dependency-rules-'));
    scratch = made;
    afterAll(() => rmSync(made, { recursive: true, force: true }));
  }
  const dir = join(scratch, `copy-${copies++}`);
  cpSync(join(root, 'src'), join(dir, 'src'), { recursive: true });
  cpSync(join(root, 'packages'), join(dir, 'packages'), {
    recursive: true,
    filter: (source) => !source.split(/[\\/]/).includes('node_modules'),
  });
  for (const file of ['.dependency-cruiser.cjs', 'tsconfig.json', 'package.json'])
    cpSync(join(root, file), join(dir, file));
  // The libraries resolve as they do in the checkout, and the workspace link npm makes points at the
  // copy's packages/, so `@escalator/github-sandbox` is the copy's simulator.
  mkdirSync(join(dir, 'node_modules/@escalator'), { recursive: true });
  for (const entry of readdirSync(join(root, 'node_modules')))
    if (entry !== '@escalator') symlinkSync(join(root, 'node_modules', entry), join(dir, 'node_modules', entry));
  symlinkSync('../../packages/github-sandbox', join(dir, 'node_modules/@escalator/github-sandbox'), 'dir');
  for (const [path, text] of Object.entries(planted)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), text);
  }
  let output: string;
  try {
    output = execFileSync(
      join(root, 'node_modules/.bin/depcruise'),
      ['src', 'packages', '--config', '.dependency-cruiser.cjs', '--output-type', 'json'],
      { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, NODE_PATH: join(root, 'node_modules') } },
    ).toString('utf8');
  } catch (error) {
    output = (error as { stdout: Buffer }).stdout.toString('utf8');
  }
  return JSON.parse(output) as Cruised;
}
