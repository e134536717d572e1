/**
 * Helm releases rendered the way their agents render them (issue 36), through renderAndDiff with
 * the real helm 3.17 and 4.1 in the render sandbox, beyond what the golden cases
 * (test/fixtures/diff-helm/random-test-hooks, file-dependencies, flux-values-files) pin:
 * - two runs on the same commits give the same bytes although the chart renders random names and
 *   values, with no render cache to hide it, and a commit diffed against itself is unchanged;
 * - `file://` dependencies are built in `proxy` isolation too, and never into the shared checkout.
 */
import { readdirSync } from 'node:fs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalGitSourceTree, renderAndDiff, type RenderOptions } from '../../src/adapters/render/index.js';
import { renderComment } from '../../src/planners/diff/index.js';
import { HELM_VERSIONS, helmBinary } from '../support/helm-binaries.js';
import { buildCaseRepo } from './support/case-repo.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/diff-helm/', import.meta.url));
const scratch = mkdtempSync(join(tmpdir(), 'escalator-helm-agents-'));
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

async function comment(
  caseName: string,
  options: RenderOptions,
  sides: 'base-head' | 'head-head' = 'base-head',
): Promise<{ markdown: string; renders: number }> {
  const repo = buildCaseRepo(join(FIXTURES, caseName));
  try {
    const base = sides === 'base-head' ? repo.base : repo.head;
    const report = await renderAndDiff({
      base: LocalGitSourceTree.open(repo.dir, base),
      head: LocalGitSourceTree.open(repo.dir, repo.head),
      // The same commit on both sides: say which file "changed", or nothing would be rendered.
      changedPaths: sides === 'base-head' ? null : ['charts/podinfo/Chart.yaml'],
      options,
    });
    return {
      markdown: renderComment(report, { baseSha: base, headSha: repo.head, repository: 'example/gitops' }),
      renders: report.stats?.renders ?? 0,
    };
  } finally {
    repo.cleanup();
  }
}

describe('a chart that renders random names and values', () => {
  it.each(HELM_VERSIONS)(
    'gives the same bytes on two runs on the same commits (helm %s, no render cache)',
    async (version) => {
      const run = (name: string): Promise<{ markdown: string; renders: number }> =>
        comment('random-test-hooks', {
          cacheDir: join(scratch, `${version}-${name}`),
          renderCache: false,
          tools: { helm: helmBinary(version) },
        });
      const first = await run('first');
      const second = await run('second');
      expect(first.renders).toBe(2);
      expect(second.markdown).toBe(first.markdown);
      expect(first.markdown).toContain('a new name on every render');
      expect(first.markdown).not.toMatch(/grpc-test-[a-z0-9]{5}|recreated|deleted/);
    },
  );

  it('is unchanged when nothing it reads changes', async () => {
    const { markdown } = await comment(
      'random-test-hooks',
      { cacheDir: join(scratch, 'same-commit'), renderCache: false, tools: { helm: helmBinary('3.17') } },
      'head-head',
    );
    expect(markdown).toContain('1 target checked, all unchanged');
  });
});

describe('file:// dependencies', () => {
  it('are built in proxy isolation too, and never written into the shared checkout', async () => {
    const cacheDir = join(scratch, 'proxy');
    const { markdown } = await comment('file-dependencies', {
      cacheDir,
      isolation: 'proxy',
      tools: { helm: helmBinary('4.1') },
    });
    expect(markdown).toContain('| `argocd:shop` | helm | changed | 0 | 1 | 0 | 0 | 0 |');
    expect(markdown).toContain('| `flux:apps/shop` | helm | changed | 0 | 1 | 0 | 0 | 0 |');
    expect(markdown).toContain('+  currency: EUR');
    expect(markdown).not.toMatch(/fails to render|CAUTION/);
    // The checkouts (one per commit) hold the chart as the commit has it: no charts/ folder, no Chart.lock.
    const written = readdirSync(cacheDir, { recursive: true, encoding: 'utf8' }).filter((path) =>
      /charts\/shop\/(charts|Chart\.lock)/.test(path),
    );
    expect(written).toEqual([]);
  });
});
