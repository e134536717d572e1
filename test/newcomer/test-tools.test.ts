/**
 * README.md's test command works on a fresh machine as written: every program the tests (and the
 * product under test) start, beyond Node and Redis, is named in README.md's "Development"
 * paragraph, and `.ci/run` installs it where a package provides it. The programs are found by
 * reading the sources: every literal first argument of spawn, spawnSync, execFile and
 * execFileSync (and of a promisified execFile), plus those started through a variable (listed
 * below, each with where it is started). A new tool in a test fails here until README.md names it.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');

/** Started through a variable or a shell line, so no literal names them. */
const THROUGH_VARIABLES: Record<string, string> = {
  kustomize: 'src/adapters/render/tools.ts (or kubectl kustomize)',
  kubectl: 'src/adapters/render/tools.ts',
  helm: 'test/support/helm-binaries.ts (scripts/fetch-helm.sh)',
  unzip: 'scripts/fetch-helm.sh',
  unshare: 'src/adapters/render/isolation.ts',
  setpriv: 'src/adapters/render/isolation.ts',
  curl: "the sandbox's printed steps, run by test/newcomer",
  'redis-server': 'packages/github-sandbox/src/redis.ts, test/support/redis-cluster.ts',
};
/** Part of every POSIX system (or of Node), or installed by the test itself. */
const BASE = new Set(['sh', 'cp', 'mv', 'npm', 'node', 'escalator', 'ldd', 'ldconfig']);

function sources(dir: string): string[] {
  const files: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    if (entry.name === 'node_modules' || entry.name === 'fixtures' || entry.name.startsWith('.')) continue;
    const path = join(dir, entry.name);
    if (entry.isDirectory()) files.push(...sources(path));
    else if (/\.(ts|mjs)$/.test(entry.name)) files.push(path);
  }
  return files;
}

function programsStarted(): Map<string, string> {
  const found = new Map<string, string>();
  for (const file of ['src', 'test', 'packages', 'scripts'].flatMap((dir) => sources(join(root, dir)))) {
    const text = readFileSync(file, 'utf8');
    const callers = ['spawn', 'spawnSync', 'execFile', 'execFileSync'];
    const promisified = /const (\w+) = promisify\(execFile\)/.exec(text)?.[1];
    if (promisified) callers.push(promisified);
    const call = new RegExp(`\\b(?:${callers.join('|')})\\(\\s*'([a-z][a-z0-9_.-]*)'`, 'g');
    for (const match of text.matchAll(call)) {
      const program = match[1]!;
      if (!found.has(program)) found.set(program, relative(root, file));
    }
  }
  for (const [program, where] of Object.entries(THROUGH_VARIABLES)) found.set(program, where);
  return found;
}

describe("README.md's test command on a fresh machine", () => {
  it('names every program the tests start, and .ci/run installs them', () => {
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const development = readme.slice(readme.indexOf('## Development'));
    const ci = readFileSync(join(root, '.ci/run'), 'utf8');
    const programs = [...programsStarted()].filter(([program]) => !BASE.has(program));
    expect(programs.map(([program]) => program)).toEqual(expect.arrayContaining(['git', 'skopeo', 'tar']));
    const unnamed = programs.filter(([program]) => !development.includes(`\`${program}\``));
    expect(unnamed, 'programs the tests start that README.md ("Development") does not name').toEqual([]);
    // .ci/run checks each by `command -v` and installs its Debian package; kustomize/kubectl it
    // only warns about (no Debian package), helm comes from scripts/fetch-helm.sh.
    const installed = [...ci.matchAll(/(\S+):(\S+)/g)].map((match) => match[1]);
    const notInstalled = programs
      .map(([program]) => program)
      .filter((program) => !['kustomize', 'kubectl', 'helm'].includes(program) && !installed.includes(program));
    expect(notInstalled, 'programs the tests start that .ci/run does not install').toEqual([]);
    // The first lines say what the test command needs beyond Node.
    expect(readme.split('\n').slice(0, 6).join('\n')).toContain('npm test');
  });
});
