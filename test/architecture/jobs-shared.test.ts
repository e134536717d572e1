import { describe, expect, it } from 'vitest';
import { cruise, cruiseCheckout, type Cruised } from './support/cruise.js';

/**
 * src/jobs/shared/ keeps only what two or more job folders use (docs/architecture.md, "Folders"):
 * a helper of one job lives in that job's folder. For each module of shared/, the job folders
 * that reach it, directly or through other shared modules.
 */
function jobsUsing(cruised: Cruised): Map<string, Set<string>> {
  const dependencies = new Map(
    cruised.modules.map((module) => [module.source, module.dependencies.map((dependency) => dependency.resolved)]),
  );
  const users = new Map<string, Set<string>>();
  for (const source of dependencies.keys()) if (source.startsWith('src/jobs/shared/')) users.set(source, new Set());
  for (const [source, imports] of dependencies) {
    const folder = /^src\/jobs\/(?!shared\/)([^/]+)\//.exec(source)?.[1];
    if (!folder) continue;
    const seen = new Set<string>();
    const next = imports.filter((path) => path.startsWith('src/jobs/shared/'));
    while (next.length > 0) {
      const path = next.pop() as string;
      if (seen.has(path)) continue;
      seen.add(path);
      users.get(path)?.add(folder);
      next.push(...(dependencies.get(path) ?? []).filter((dependency) => dependency.startsWith('src/jobs/shared/')));
    }
  }
  return users;
}

/** The shared modules fewer than two job folders use, with the ones that do. */
function singleUse(cruised: Cruised): string[] {
  return [...jobsUsing(cruised)]
    .filter(([, folders]) => folders.size < 2)
    .map(([path, folders]) => `${path}: ${[...folders].join(', ') || 'no job'}`);
}

describe('src/jobs/shared/', () => {
  it('holds only what two or more job folders use', async () => {
    const cruised = await cruiseCheckout();
    expect(singleUse(cruised)).toEqual([]);
    // What the count is about: every job folder reaches the shared job dependencies.
    expect(jobsUsing(cruised).get('src/jobs/shared/deps.ts')?.size).toBeGreaterThanOrEqual(10);
    // It may wait for the other architecture test file's cruise of the same tree.
  }, 120_000);

  it('fails on a planted helper that only one job uses, or none', async () => {
    const cruised = await cruise({
      'src/jobs/shared/planted-one.ts': 'export const planted = 1;\n',
      'src/jobs/shared/planted-none.ts': 'export const unused = 2;\n',
      // Used twice by one job is still one job; reached through another shared module counts.
      'src/jobs/shared/planted-via.ts': "import { planted } from './planted-one.js';\nexport const via = planted;\n",
      'src/jobs/bump/planted-a.ts': "import { via } from '../shared/planted-via.js';\nexport const a = via;\n",
      'src/jobs/bump/planted-b.ts': "import { planted } from '../shared/planted-one.js';\nexport const b = planted;\n",
    });
    expect(singleUse(cruised)).toEqual(
      expect.arrayContaining([
        'src/jobs/shared/planted-one.ts: bump',
        'src/jobs/shared/planted-via.ts: bump',
        'src/jobs/shared/planted-none.ts: no job',
      ]),
    );
    expect(singleUse(cruised)).toHaveLength(3);
  }, 60_000);
});
