import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
  closeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cruise as depcruise, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';
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
 * dependency-cruiser in this process, exactly as `npm run lint` runs it
 * (`depcruise src packages --config .dependency-cruiser.cjs`), over the tree at `dir`: the options
 * of .dependency-cruiser.cjs, its tsconfig.json. In-process saves starting Node and loading
 * TypeScript for each run.
 */
async function cruiseTree(dir: string): Promise<Cruised> {
  const options = await extractDepcruiseOptions(join(root, '.dependency-cruiser.cjs'));
  const tsConfigFile = join(dir, 'tsconfig.json');
  const result = await depcruise(
    ['src', 'packages'],
    { ...options, baseDir: dir, tsConfig: { fileName: tsConfigFile }, outputType: 'json' },
    {},
    { tsConfig: extractTSConfig(tsConfigFile) },
  );
  const output = (typeof result.output === 'string' ? JSON.parse(result.output) : result.output) as ICruiseResult;
  // Only what the tests read: the cached copy stays small.
  return {
    modules: output.modules.map((module) => ({
      source: module.source,
      dependencies: module.dependencies.map((dependency) => ({ resolved: dependency.resolved })),
    })),
    summary: {
      violations: output.summary.violations.map((violation) => ({
        rule: { name: violation.rule.name },
        from: violation.from,
        to: violation.to,
      })),
    },
  };
}

/**
 * Run dependency-cruiser with the product's rules over a copy of src/ and packages/ (the simulator)
 * plus `planted` files (a check that has never failed is not known to work). Call it from a test
 * file: the copies are removed after its tests.
 */
export async function cruise(planted: Record<string, string>): Promise<Cruised> {
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
  return cruiseTree(dir);
}

/** Every file under `dir` (relative to the checkout), node_modules/ left out, in a stable order. */
function filesUnder(dir: string): string[] {
  return readdirSync(join(root, dir), { withFileTypes: true })
    .filter((entry) => entry.name !== 'node_modules')
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((entry) =>
      entry.isDirectory() ? filesUnder(`${dir}/${entry.name}`) : entry.isFile() ? [`${dir}/${entry.name}`] : [],
    );
}

/**
 * What decides dependency-cruiser's answer on the checkout: every file of src/ and packages/, the
 * rules, tsconfig.json, the manifests and lock (so the installed libraries), and the versions of
 * Node, dependency-cruiser and TypeScript.
 */
function treeKey(): string {
  const hash = createHash('sha256');
  const version = (name: string) =>
    (JSON.parse(readFileSync(join(root, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  hash.update(`node ${process.version}\0dependency-cruiser ${version('dependency-cruiser')}\0`);
  hash.update(`typescript ${version('typescript')}\0`);
  for (const file of [
    '.dependency-cruiser.cjs',
    'tsconfig.json',
    'package.json',
    'package-lock.json',
    ...filesUnder('src'),
    ...filesUnder('packages'),
  ]) {
    hash.update(`${file}\0`);
    hash.update(existsSync(join(root, file)) ? readFileSync(join(root, file)) : '(absent)');
    hash.update('\0');
  }
  return hash.digest('hex');
}

const cacheDir = join(root, '.cache/dependency-rules');

/**
 * True while the process that wrote `lock` (its pid is the content) is alive and the lock is
 * younger than a minute (a cruise takes seconds; an older lock is one whose pid was reused).
 */
function held(lock: string): boolean {
  try {
    if (statSync(lock).mtimeMs < Date.now() - 60_000) return false;
    const pid = Number(readFileSync(lock, 'utf8'));
    // Just created: the pid is being written.
    if (!Number.isInteger(pid) || pid <= 0) return true;
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: alive, someone else's; ENOENT: the lock went away.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * dependency-cruiser's answer on the checkout's src/ and packages/ as they are, shared by the
 * architecture test files (dependency-rules, jobs-shared): the first to ask cruises and writes it
 * under .cache/dependency-rules/, keyed by everything that decides it (`treeKey`); the others wait
 * for it and read it. Any change of a source file, rule, configuration or library cruises again.
 */
export async function cruiseCheckout(): Promise<Cruised> {
  const key = treeKey();
  const file = join(cacheDir, `${key}.json`);
  const lock = `${file}.lock`;
  mkdirSync(cacheDir, { recursive: true });
  for (;;) {
    if (existsSync(file)) return JSON.parse(readFileSync(file, 'utf8')) as Cruised;
    let fd: number;
    try {
      fd = openSync(lock, 'wx');
    } catch {
      // Another test file is cruising the same tree: wait for its answer, unless it died.
      if (!held(lock)) rmSync(lock, { force: true });
      else await new Promise((resolve) => setTimeout(resolve, 200));
      continue;
    }
    try {
      writeFileSync(fd, String(process.pid));
      closeSync(fd);
      const cruised = await cruiseTree(root);
      const partial = `${file}.${process.pid}`;
      writeFileSync(partial, JSON.stringify(cruised));
      renameSync(partial, file);
      // Only the tree as it is now is worth keeping.
      for (const entry of readdirSync(cacheDir))
        if (entry.endsWith('.json') && join(cacheDir, entry) !== file) rmSync(join(cacheDir, entry), { force: true });
      return cruised;
    } finally {
      rmSync(lock, { force: true });
    }
  }
}
