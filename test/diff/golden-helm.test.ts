/**
 * Golden rendered diffs of Helm targets with the real helm: every case in test/fixtures/diff-helm/
 * (same layout as test/fixtures/diff/: base/, head/, case.json) is rendered through renderAndDiff
 * with helm 3.17 and with helm 4.1 (scripts/fetch-helm.sh), in the render sandbox, and each comment
 * must equal that version's golden byte for byte: `expected-helm-3.17.md`, `expected-helm-4.1.md`.
 * `UPDATE_GOLDEN=1` rewrites them. A case says whether the two helms render it differently
 * (`helmOutputsDiffer`), which is checked with the version lines set aside, and every target helm
 * rendered names that helm ("Rendered with helm v3.17.3").
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalGitSourceTree, renderAndDiff } from '../../src/adapters/render/index.js';
import { GITHUB_BODY_LIMIT, renderComment } from '../../src/planners/diff/index.js';
import { HELM_VERSIONS, helmBinary, type HelmVersion } from '../support/helm-binaries.js';
import { buildCaseRepo, readCaseMeta, unbalancedMarkdown } from './support/case-repo.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/diff-helm/', import.meta.url));
const cases = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();
const cacheRoot = mkdtempSync(join(tmpdir(), 'escalator-diff-helm-'));
afterAll(() => rmSync(cacheRoot, { recursive: true, force: true }));

async function renderCase(caseDir: string, version: HelmVersion): Promise<string> {
  const repo = buildCaseRepo(caseDir);
  try {
    const report = await renderAndDiff({
      base: LocalGitSourceTree.open(repo.dir, repo.base),
      head: LocalGitSourceTree.open(repo.dir, repo.head),
      changedPaths: null,
      targets: repo.meta.targets,
      options: { cacheDir: cacheRoot, tools: { helm: helmBinary(version) } },
    });
    return renderComment(report, { baseSha: repo.base, headSha: repo.head, repository: 'example/gitops' });
  } finally {
    repo.cleanup();
  }
}

/** The comment without the lines that name the helm version. */
function withoutVersion(markdown: string): string {
  return markdown.replace(/Rendered with helm v\d+\\\.\d+\\\.\d+/g, 'Rendered with helm (version)');
}

describe('golden Helm diffs, rendered by helm 3.17 and helm 4.1', () => {
  it.each(cases)('%s', async (name) => {
    const caseDir = join(FIXTURES, name);
    const meta = readCaseMeta(caseDir);
    const comments = new Map<HelmVersion, string>();
    for (const version of HELM_VERSIONS) {
      const markdown = await renderCase(caseDir, version);
      comments.set(version, markdown);
      const expectedFile = join(caseDir, `expected-helm-${version}.md`);
      if (process.env.UPDATE_GOLDEN === '1') writeFileSync(expectedFile, markdown);
      expect(existsSync(expectedFile), `${expectedFile} is missing: run with UPDATE_GOLDEN=1 and review it`).toBe(true);
      expect(markdown, `helm ${version}`).toBe(readFileSync(expectedFile, 'utf8'));
      expect(markdown.length).toBeLessThan(GITHUB_BODY_LIMIT);
      expect(unbalancedMarkdown(markdown)).toBeUndefined();
      // Prose is markdown-escaped: "Rendered with helm v3\.17\.3\."; every version line names this helm.
      for (const line of markdown.split('\n').filter((text) => text.includes('Rendered with helm')))
        expect(line, `the comment names helm ${version}`).toContain(
          `Rendered with helm v${version.replace('.', '\\.')}\\.`,
        );
      const top = markdown.split('\n| Target |')[0] as string;
      for (const words of meta.top) expect(top, `the top of the comment says ${words}`).toContain(words);
      for (const words of meta.contains) expect(markdown, `the comment says ${words}`).toContain(words);
      for (const words of meta.absent) expect(markdown, `the comment does not say ${words}`).not.toContain(words);
    }
    const [three, four] = HELM_VERSIONS.map((version) => withoutVersion(comments.get(version) as string));
    expect(
      three !== four,
      `helm 3.17 and helm 4.1 render ${name} ${meta.helmOutputsDiffer ? 'differently' : 'alike'}`,
    ).toBe(meta.helmOutputsDiffer);
  });
});
