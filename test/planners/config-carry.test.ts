import { describe, expect, it } from 'vitest';
import {
  planConfigCarry,
  renderBlockedComment,
  renderConfigSection,
  withVersionsOf,
  type ConfigChange,
  type LoadedChange,
} from '../../src/planners/config-carry.js';

const change = (n: number, landedAt: string): ConfigChange => ({
  id: `dev:${String(n).repeat(40).slice(0, 40)}`,
  source: 'dev',
  pull: { number: n, title: `Change ${n}`, author: 'alice' },
  origins: [],
  mergeSha: String(n).repeat(40).slice(0, 40),
  parentSha: '0'.repeat(40),
  landedAt,
  folder: 'apps/hello/overlays/dev',
  pathIndex: 0,
  files: ['cm.yaml'],
});
const cm = (level: string, mode = 'fast', comment = '') => `data:\n  LOG_LEVEL: ${level}${comment}\n  MODE: ${mode}\n`;
const loaded = (n: number, before: string | undefined, after: string | undefined, path = 'cm.yaml'): LoadedChange => ({
  change: { ...change(n, `2026-12-0${n}T00:00:00.000Z`), files: [path] },
  files: [{ path, before, after }],
});

describe('planConfigCarry', () => {
  it('plans changes in order, each on what the one before left, and writes the last text once', () => {
    const plan = planConfigCarry({
      targetFolder: 'apps/hello/overlays/staging',
      targetFiles: new Map([['cm.yaml', cm('info', 'slow', ' # staging')]]),
      changes: [loaded(1, cm('info'), cm('debug')), loaded(2, cm('debug'), cm('trace'))],
    });
    expect(plan.changes.map((c) => c.outcome)).toEqual(['carried', 'carried']);
    expect(plan.updates).toEqual([
      { path: 'apps/hello/overlays/staging/cm.yaml', content: cm('trace', 'slow', ' # staging') },
    ]);
    expect(plan.deletions).toEqual([]);
  });

  it('calls a change the target already holds in-place, and one whose edits meet kept values blocked', () => {
    const plan = planConfigCarry({
      targetFolder: 'apps/hello/overlays/staging',
      targetFiles: new Map([['cm.yaml', cm('debug', 'slow')]]),
      changes: [loaded(1, cm('info', 'slow'), cm('debug', 'slow')), loaded(2, cm('info', 'slow'), cm('info', 'fast'))],
    });
    expect(plan.changes.map((c) => c.outcome)).toEqual(['in-place', 'carried']);
    const kept = planConfigCarry({
      targetFolder: 'apps/hello/overlays/staging',
      targetFiles: new Map([['cm.yaml', cm('warn')]]),
      changes: [loaded(1, cm('info'), cm('debug'))],
    });
    expect(kept.changes.map((c) => c.outcome)).toEqual(['blocked']);
    expect(kept.updates).toEqual([]);
    expect(renderBlockedComment({ target: 'staging', app: 'hello', carried: kept.changes[0]! })).toBe(
      [
        'Escalator did not open a promotion of this change into **staging** for `hello`: none of its edits can be made there.',
        '',
        '- `cm.yaml`: staging keeps `data.LOG_LEVEL: warn` (line 2); dev changed `info` → `debug`',
        '',
        "Where staging keeps its own value on purpose, nothing is needed. Otherwise change staging's files by hand; `/escalator plan` lists the change until a promotion into staging merges.",
      ].join('\n'),
    );
  });

  it('deletes a file the change removed, and creates one it added', () => {
    const plan = planConfigCarry({
      targetFolder: 'apps/hello/overlays/staging',
      targetFiles: new Map([['old.yaml', cm('info')]]),
      changes: [loaded(1, cm('info'), undefined, 'old.yaml'), loaded(2, undefined, cm('new'), 'new.yaml')],
    });
    expect(plan.deletions).toEqual(['apps/hello/overlays/staging/old.yaml']);
    expect(plan.updates.map((u) => u.path)).toEqual(['apps/hello/overlays/staging/new.yaml']);
  });

  it('lists edits, provenance and what the target keeps in the pull request section', () => {
    const plan = planConfigCarry({
      targetFolder: 'apps/hello/overlays/staging',
      targetFiles: new Map([['cm.yaml', cm('info', 'slow')]]),
      changes: [
        {
          ...loaded(1, cm('info', 'fast'), cm('debug', 'faster')),
          change: {
            ...change(1, '2026-12-01T00:00:00.000Z'),
            origins: [{ number: 7, title: 'Origin | pipe', author: 'bob' }],
          },
        },
      ],
    });
    expect(
      renderConfigSection({ source: 'dev', target: 'staging', app: 'hello', changes: plan.changes }).join('\n'),
    ).toBe(
      [
        '',
        '**Configuration** from dev for `hello`, in the order it landed there',
        '',
        '- #7 Origin \\| pipe (@bob) → #1 Change 1 (@alice)',
        '  - `cm.yaml` edited',
        '    - `data.LOG_LEVEL`: `info` → `debug` (line 2)',
        '    - staging keeps `data.MODE: slow` (line 3); dev changed `fast` → `faster`',
      ].join('\n'),
    );
  });
});

describe('withVersionsOf', () => {
  it('sets the image versions of the text after in the text before, so only configuration differs', () => {
    const before = 'images:\n  - name: ghcr.io/example/hello\n    newTag: 1.0.0 # pinned\nreplicas: []\n';
    const after = 'images:\n  - name: ghcr.io/example/hello\n    newTag: 1.1.0 # pinned\nreplicas: []\n';
    expect(withVersionsOf('kustomization.yaml', before, after)).toBe(after);
    expect(withVersionsOf('kustomization.yaml', 'resources: []\n', after)).toBe('resources: []\n');
  });
});
