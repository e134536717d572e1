import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DiffStoppedError, DiffThreads } from '../../src/adapters/render/diff-threads.js';
import { LocalGitSourceTree, renderAndDiff } from '../../src/adapters/render/index.js';
import {
  diffLines,
  diffTarget,
  normalizeObject,
  parseManifests,
  renderCheckSummary,
  renderComment,
  GITHUB_BODY_LIMIT,
  type RenderOutcome,
  type Target,
} from '../../src/planners/diff/index.js';
import { MAX_EDIT_LINES } from '../../src/planners/diff/object-diff.js';

// Issue 22 §4: a ConfigMap of 11,000 changed lines held the worker's event loop (and intake, where
// both ran in one process) for about 36 s per attempt, and BullMQ lost the job's lock.

/** A ConfigMap with `lines` data keys whose values carry `tag`: every line differs between two tags. */
function bigConfigMap(lines: number, tag: string, name = 'big'): string {
  const data = Array.from({ length: lines }, (_, i) => `  key${i}: "${tag}-${i}"`).join('\n');
  return `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\ndata:\n${data}\n`;
}

const ok = (yaml: string): RenderOutcome => ({ status: 'ok', yaml });
const target: Target = { id: 'apps/big', kind: 'plain', dir: 'apps/big' };

function linesOf(yaml: string) {
  const parsed = parseManifests(yaml);
  if (!parsed.ok) throw new Error(parsed.message);
  return normalizeObject(parsed.objects[0]!).lines;
}

describe('the line diff is bounded', () => {
  it('summarizes a change of 11,000 lines instead of diffing it, the same way every time', () => {
    const base = linesOf(bigConfigMap(11_000, 'before'));
    const head = linesOf(bigConfigMap(11_000, 'after'));
    const first = diffLines(base, head);
    expect(first).toEqual({ hunks: [], tooLarge: { removed: 11_000, added: 11_000 } });
    expect(diffLines(base, head)).toEqual(first);
  });

  it('still shows a change just under the bound line by line', () => {
    const changed = MAX_EDIT_LINES / 2 - 10; // each changed line is one removal and one addition
    const base = linesOf(bigConfigMap(changed, 'before'));
    const head = linesOf(bigConfigMap(changed, 'after'));
    const diff = diffLines(base, head);
    expect(diff.tooLarge).toBeUndefined();
    expect(diff.hunks.join('\n').match(/^-/gm)).toHaveLength(changed);
  });

  it('reports the too-large object as changed (never unchanged), and says so in the comment and the check', () => {
    const diff = diffTarget(target, ok(bigConfigMap(11_000, 'before')), ok(bigConfigMap(11_000, 'after')));
    expect(diff.status).toBe('changed');
    expect(diff.objects).toMatchObject([
      { kind: 'ConfigMap', name: 'big', change: 'changed', hunks: [], tooLarge: { removed: 11_000, added: 11_000 } },
    ]);
    const report = {
      version: 1 as const,
      baseSha: 'a'.repeat(40),
      headSha: 'b'.repeat(40),
      targets: [diff],
      summary: {
        targetsChecked: 1,
        targetsChanged: 1,
        targetsUnchanged: 0,
        targetsFailed: 0,
        targetsNotRendered: 0,
        added: 0,
        changed: 1,
        removed: 0,
        renamed: 0,
        recreated: 0,
        secretsChanged: 0,
        failures: 0,
      },
      alerts: [],
      images: [],
      notes: [],
    };
    const comment = renderComment(report, {
      repository: 'acme/gitops',
      baseSha: report.baseSha,
      headSha: report.headSha,
    });
    expect(comment).toContain('11000 lines removed and 11000 lines added: too large to show line by line');
    expect(comment.length).toBeLessThan(GITHUB_BODY_LIMIT);
    expect(renderCheckSummary(report).conclusion).toBe('success');
  });
});

describe('diffs run in threads with a time and a memory limit', () => {
  it('answers while the main thread goes on, and stops a diff past its time limit without blocking the event loop', async () => {
    const threads = new DiffThreads({ threads: 1, timeoutMs: 1 });
    try {
      // Parsing and normalizing 40,000 lines takes far longer than 1 ms; on the main thread the
      // timer could not fire before the diff returned.
      const stopped = threads.diff(target, ok(bigConfigMap(20_000, 'before')), ok(bigConfigMap(20_000, 'after')));
      await expect(stopped).rejects.toThrow(DiffStoppedError);
      await expect(stopped).rejects.toThrow('the diff took longer than 1 ms');
    } finally {
      await threads.close();
    }
  });

  it('stops a diff that needs more heap than its thread may hold, and the next diff gets a new thread', async () => {
    const threads = new DiffThreads({ threads: 1, maxHeapMb: 16 });
    try {
      await expect(
        threads.diff(target, ok(bigConfigMap(30_000, 'before')), ok(bigConfigMap(30_000, 'after'))),
      ).rejects.toThrow('the diff needed more than 16 MiB of memory');
      const small = await threads.diff(target, ok(bigConfigMap(3, 'before')), ok(bigConfigMap(3, 'after')));
      expect(small.objects[0]?.hunks[0]).toContain('+  key2: after-2');
    } finally {
      await threads.close();
    }
  });

  it('diffs several targets of one pull request, one stopped target shown as not diffed, the others as they are', async () => {
    const scratch = mkdtempSync(join(tmpdir(), 'escalator-diff-bound-'));
    try {
      const repo = join(scratch, 'repo');
      mkdirSync(repo);
      const env = {
        PATH: process.env.PATH ?? '',
        HOME: scratch,
        GIT_CONFIG_GLOBAL: '/dev/null',
        GIT_CONFIG_NOSYSTEM: '1',
        GIT_AUTHOR_NAME: 't',
        GIT_AUTHOR_EMAIL: 't@t.invalid',
        GIT_COMMITTER_NAME: 't',
        GIT_COMMITTER_EMAIL: 't@t.invalid',
      };
      const git = (...args: string[]): string =>
        execFileSync('git', ['-C', repo, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] })
          .toString('utf8')
          .trim();
      git('init', '-q', '-b', 'main');
      const write = (files: Record<string, string>): string => {
        for (const [path, text] of Object.entries(files)) {
          mkdirSync(join(repo, path, '..'), { recursive: true });
          writeFileSync(join(repo, path), text);
        }
        git('add', '-A');
        git('commit', '-q', '-m', 'c');
        return git('rev-parse', 'HEAD');
      };
      const baseSha = write({
        'huge/cm.yaml': bigConfigMap(30_000, 'before', 'huge'),
        'small/cm.yaml': bigConfigMap(2, 'before', 'small'),
      });
      const headSha = write({
        'huge/cm.yaml': bigConfigMap(30_000, 'after', 'huge'),
        'small/cm.yaml': bigConfigMap(2, 'after', 'small'),
      });
      const threads = new DiffThreads({ threads: 1, maxHeapMb: 16 });
      try {
        const report = await renderAndDiff({
          base: LocalGitSourceTree.open(repo, baseSha),
          head: LocalGitSourceTree.open(repo, headSha),
          changedPaths: null,
          options: { cacheDir: join(scratch, 'cache'), diffThreads: threads },
        });
        expect(report.targets.map((t) => [t.id, t.status, t.failure?.side])).toEqual([
          ['huge', 'failed', 'diff'],
          ['small', 'changed', undefined],
        ]);
        expect(report.summary.failures).toBe(1);
        const comment = renderComment(report, { repository: 'acme/gitops', baseSha, headSha });
        expect(comment).toContain('1 target not diffed');
        expect(comment).toContain('rendered, but not diffed: the diff needed more than 16 MiB of memory');
        expect(comment).toContain('+  key1: after-1');
        const check = renderCheckSummary(report);
        expect(check.conclusion).toBe('failure');
        expect(check.title).toContain('1 target not diffed');
      } finally {
        await threads.close();
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  }, 60_000);
});
