/**
 * Golden rendered diffs: every case in test/fixtures/diff/ is committed into a temporary git
 * repository (base, then head), rendered with the real `kubectl kustomize` (or kustomize) and
 * diffed; the comment must equal `expected.md` byte for byte. `UPDATE_GOLDEN=1` rewrites them.
 * Every comment is also checked for size, balanced markdown, what the case says the reviewer sees
 * at the top (`top`, above the targets table) and — where the case lists canaries — the absence of
 * every secret value in the comment, the JSON report and the check run.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { LocalGitSourceTree, renderAndDiff } from '../../src/adapters/render/index.js';
import { GITHUB_BODY_LIMIT, renderCheckSummary, renderComment, toJsonReport } from '../../src/planners/diff/index.js';
import { buildCaseRepo, readCaseMeta, unbalancedMarkdown } from './support/case-repo.js';

const FIXTURES = fileURLToPath(new URL('../fixtures/diff/', import.meta.url));
const FAKE_HELM = fileURLToPath(new URL('./support/fake-helm.sh', import.meta.url));
const cases = readdirSync(FIXTURES, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name)
  .sort();
const cacheRoot = mkdtempSync(join(tmpdir(), 'escalator-diff-golden-'));
afterAll(() => rmSync(cacheRoot, { recursive: true, force: true }));

async function renderCase(
  caseDir: string,
  cacheDir: string,
): Promise<{ markdown: string; json: string; check: string; conclusion: string }> {
  const repo = buildCaseRepo(caseDir);
  try {
    const { meta } = repo;
    const report = await renderAndDiff({
      base: LocalGitSourceTree.open(repo.dir, repo.base),
      head: LocalGitSourceTree.open(repo.dir, repo.head),
      changedPaths: null,
      targets: meta.targets,
      options: {
        cacheDir,
        tools: meta.fakeHelm ? { helm: FAKE_HELM } : { helm: null },
        ...(meta.maxTargets ? { maxTargets: meta.maxTargets } : {}),
      },
    });
    const markdown = renderComment(report, {
      baseSha: repo.base,
      headSha: repo.head,
      repository: 'example/gitops',
      ...(meta.mergeCommit !== undefined ? { mergeCommit: meta.mergeCommit } : {}),
      ...(meta.maxChars ? { maxChars: meta.maxChars } : {}),
    });
    const check = renderCheckSummary(report);
    return {
      markdown,
      json: toJsonReport(report),
      check: `${check.title}\n${check.summary}`,
      conclusion: check.conclusion,
    };
  } finally {
    repo.cleanup();
  }
}

describe('golden rendered diffs', () => {
  it.each(cases)('%s', async (name) => {
    const caseDir = join(FIXTURES, name);
    const meta = readCaseMeta(caseDir);
    const { markdown, json, check, conclusion } = await renderCase(caseDir, cacheRoot);
    if (meta.conclusion) expect(conclusion, 'the check run concludes').toBe(meta.conclusion);
    const expectedFile = join(caseDir, 'expected.md');
    if (process.env.UPDATE_GOLDEN === '1') writeFileSync(expectedFile, markdown);
    expect(existsSync(expectedFile), `${expectedFile} is missing: run with UPDATE_GOLDEN=1 and review it`).toBe(true);
    expect(markdown).toBe(readFileSync(expectedFile, 'utf8'));
    expect(markdown.length).toBeLessThan(GITHUB_BODY_LIMIT);
    expect(unbalancedMarkdown(markdown)).toBeUndefined();
    // What a reviewer reads first: the headline, the not-rendered block and the alerts, above the tables.
    const top = markdown.split('\n| Target |')[0] as string;
    for (const words of meta.top) expect(top, `the top of the comment says ${words}`).toContain(words);
    for (const words of meta.contains) expect(markdown, `the comment says ${words}`).toContain(words);
    for (const words of meta.absent) expect(markdown, `the comment does not say ${words}`).not.toContain(words);
    for (const canary of meta.canaries) {
      for (const [what, text] of [
        ['comment', markdown],
        ['JSON', json],
        ['check run', check],
      ] as const) {
        expect(text.includes(canary), `${what} contains the canary ${canary}`).toBe(false);
        expect(
          text.includes(Buffer.from(canary).toString('base64')),
          `${what} contains the canary ${canary} in base64`,
        ).toBe(false);
      }
    }
  });
});

describe('determinism', () => {
  it.each(['secrets', 'large-target', 'markdown-injection'])(
    '%s: a fresh run and a cached run give identical bytes',
    async (name) => {
      const caseDir = join(FIXTURES, name);
      const fresh = mkdtempSync(join(tmpdir(), 'escalator-diff-fresh-'));
      try {
        const first = await renderCase(caseDir, fresh);
        const second = await renderCase(caseDir, fresh);
        expect(second.markdown).toBe(first.markdown);
        expect(second.json).toBe(first.json);
        expect(second.check).toBe(first.check);
      } finally {
        rmSync(fresh, { recursive: true, force: true });
      }
    },
  );
});
