/**
 * README.md says which Node.js versions `npm ci` works on; every installed package's own
 * `engines.node` must agree: nothing warns on the recommended version, and on the oldest
 * supported one exactly the packages the README names warn.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';
import { describe, expect, it } from 'vitest';

const root = join(import.meta.dirname, '../..');
const readme = readFileSync(join(root, 'README.md'), 'utf8');
const need = readme.slice(readme.indexOf('## What you need'), readme.indexOf('## Try it')).replace(/\s+/g, ' ');
const lock = JSON.parse(readFileSync(join(root, 'package-lock.json'), 'utf8')) as {
  packages: Record<
    string,
    { version?: string; engines?: { node?: string } | string[]; optional?: boolean; dev?: boolean }
  >;
};

/** `name@version` of every package npm ci installs everywhere whose engines.node excludes `node`. */
function warnings(node: string, only: 'all' | 'product' = 'all'): string[] {
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path.includes('node_modules/') && !entry.optional)
    .filter(([, entry]) => only === 'all' || !entry.dev)
    .filter(([, entry]) => {
      const range = !Array.isArray(entry.engines) ? entry.engines?.node : undefined;
      return range !== undefined && !semver.satisfies(node, range);
    })
    .map(
      ([path, entry]) => `${path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${entry.version}`,
    )
    .sort();
}

describe("README.md's Node.js versions", () => {
  const recommended = /Node\.js (\d+\.\d+) or newer with npm/.exec(need)?.[1];
  const oldest = /Node\.js (20\.\d+) or newer 20\.x works/.exec(need)?.[1];

  it('installs without an engine warning on the recommended version', () => {
    expect(recommended).toBeDefined();
    expect(warnings(`${recommended}.0`)).toEqual([]);
  });

  it('names every package that warns on the oldest version it supports, and no other', () => {
    expect(oldest).toBeDefined();
    const named = [...(/warns `EBADENGINE` for ([^:]*):/.exec(need)?.[1] ?? '').matchAll(/`([^`]+@[^`]+)`/g)]
      .map((m) => m[1])
      .sort();
    expect(named).toEqual(warnings(`${oldest}.0`));
    expect(warnings(`${oldest}.0`).length).toBeGreaterThan(0);
  });

  it("states the product's own minimum as package.json does", () => {
    const engines = (JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { engines: { node: string } })
      .engines.node;
    const minimum = semver.minVersion(engines)?.version;
    expect(need).toContain(`the product alone needs ${minimum}`);
    // The product's own dependencies install on its minimum with the same warnings as on the oldest 20.x.
    expect(warnings(minimum ?? '0.0.0', 'product')).toEqual(warnings(`${oldest}.0`));
  });
});
