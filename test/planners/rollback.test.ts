import { describe, expect, it } from 'vitest';
import { planHealthGate, type HealthGateApp } from '../../src/planners/health-gate.js';
import { planPromotion } from '../../src/planners/promotion-plan.js';
import {
  planAutomaticRollback,
  planRollbackGuard,
  renderRollbackTitle,
  rollbackNote,
  sameVersions,
  type RollbackRecord,
} from '../../src/planners/rollback.js';

const image = 'ghcr.io/example/hello';
const digest = (byte: string) => `sha256:${byte.repeat(64)}`;
const v = (tag: string, d?: string) => ({ name: image, tag, ...(d ? { digest: d } : {}) });
const record = (overrides: Partial<RollbackRecord> = {}): RollbackRecord => ({
  environment: 'staging',
  app: 'hello',
  from: [v('1.2.0', digest('b'))],
  to: [v('1.1.0', digest('a'))],
  because:
    'hello 1.2.0 went Degraded in staging at 12:03 for 5m (Argo CD app hello-staging: 0/3 ready); rolling back to 1.1.0',
  spell: '2026-12-05T12:03:00.000Z',
  at: '2026-12-05T12:08:00.000Z',
  state: 'proposed',
  pull: 7,
  ...overrides,
});

describe('a rollback sticks', () => {
  // Every job that plans dev → staging on Escalator's own asks the same question: the rollback's
  // own merge (a push), a health report of dev, a soak's end, a window opening, a later push of
  // another file. Each time dev still runs 1.2.0, the one staging was rolled back from.
  it.each([
    ['the push of the rollback merge'],
    ['a healthy report of dev about 1.2.0'],
    ['a later push that changed another app'],
    ['a soak ending, a window opening, a freeze lifted'],
  ])('does not propose 1.2.0 to staging again on %s', () => {
    const guard = planRollbackGuard({ record: record(), source: 'dev', proposed: [v('1.2.0', digest('b'))] });
    expect(guard).toEqual({
      kind: 'block',
      reason:
        'staging was rolled back from hello 1.2.0 at 2026-12-05 12:08 UTC; Escalator proposes 1.2.0 again only when dev runs another version, or when a person comments /escalator promote staging hello',
    });
  });

  it('holds 1.2.0 back however the source spells it: without its digest too', () => {
    expect(planRollbackGuard({ record: record(), source: 'dev', proposed: [v('1.2.0')] }).kind).toBe('block');
  });

  it('is lifted by a new version landing in the source', () => {
    expect(planRollbackGuard({ record: record(), source: 'dev', proposed: [v('1.3.0', digest('c'))] })).toEqual({
      kind: 'lift',
      reason: 'dev runs hello 1.3.0 now, not the 1.2.0 staging was rolled back from',
    });
  });

  it('is lifted by the same tag rebuilt (another digest): another version', () => {
    expect(planRollbackGuard({ record: record(), source: 'dev', proposed: [v('1.2.0', digest('d'))] }).kind).toBe(
      'lift',
    );
  });

  it('is lifted by a person who comments /escalator promote, even for 1.2.0', () => {
    expect(
      planRollbackGuard({ record: record(), source: 'dev', proposed: [v('1.2.0', digest('b'))], person: 'alice' }),
    ).toEqual({
      kind: 'lift',
      reason: '@alice asked for this promotion; the rollback of hello in staging from 1.2.0 no longer holds it back',
    });
  });

  it('does nothing without a rollback on record, or when the source runs nothing of the app', () => {
    expect(planRollbackGuard({ record: undefined, source: 'dev', proposed: [v('1.2.0')] })).toEqual({ kind: 'none' });
    expect(planRollbackGuard({ record: record(), source: 'dev', proposed: [] })).toEqual({ kind: 'none' });
  });

  it('the story, step by step: merge, report, push hold it back; 1.3.0 in dev lifts it', () => {
    let kept: RollbackRecord | undefined = record();
    const steps: Array<[string, ReturnType<typeof v>]> = [
      ['merge', v('1.2.0', digest('b'))],
      ['report', v('1.2.0', digest('b'))],
      ['push', v('1.2.0', digest('b'))],
      ['new version in dev', v('1.3.0', digest('c'))],
      ['push after', v('1.3.0', digest('c'))],
    ];
    const seen = steps.map(([step, proposed]) => {
      const guard = planRollbackGuard({ record: kept, source: 'dev', proposed: [proposed] });
      if (guard.kind === 'lift') kept = undefined;
      return [step, guard.kind];
    });
    expect(seen).toEqual([
      ['merge', 'block'],
      ['report', 'block'],
      ['push', 'block'],
      ['new version in dev', 'lift'],
      ['push after', 'none'],
    ]);
  });
});

describe('degraded again after a rollback', () => {
  const degradation = 'Argo CD app hello-staging: Deployment hello: 0/2 replicas ready';

  it('halts instead of rolling back a second time, with one message that says how to lift it', () => {
    const decision = planAutomaticRollback({ record: record(), running: [v('1.1.0', digest('a'))], degradation });
    expect(decision).toEqual({
      kind: 'halt',
      hold: 'Escalator: hello stayed degraded in staging after the rollback from 1.2.0 to 1.1.0',
      message:
        'hello 1.1.0 is degraded in staging too, after the rollback from 1.2.0 (Argo CD app hello-staging: Deployment hello: 0/2 replicas ready). The cause is not the version, so Escalator does not roll back again: promotions of hello into staging are halted until a person looks. Comment `/escalator release staging hello` to lift the halt; 1.2.0 is proposed again only when a person comments `/escalator promote staging hello` or another version runs in the environment it comes from.',
    });
  });

  it('says it once: halted already, a later spell does nothing', () => {
    expect(
      planAutomaticRollback({ record: record({ state: 'halted' }), running: [v('1.1.0', digest('a'))], degradation }),
    ).toEqual({ kind: 'halted' });
  });

  it('rolls back as usual without a record, while the rollback is not merged yet, and for a version that landed since', () => {
    expect(planAutomaticRollback({ record: undefined, running: [v('1.2.0')], degradation }).kind).toBe('rollback');
    expect(planAutomaticRollback({ record: record(), running: [v('1.2.0', digest('b'))], degradation }).kind).toBe(
      'rollback',
    );
    expect(planAutomaticRollback({ record: record(), running: [v('1.3.0', digest('c'))], degradation }).kind).toBe(
      'rollback',
    );
  });
});

describe('a rollback says what it is', () => {
  it('titles it "Roll back hello in staging: 1.2.0 → 1.1.0"', () => {
    expect(renderRollbackTitle('staging', 'hello', [{ app: 'hello', from: '1.2.0', to: '1.1.0' }])).toBe(
      'Roll back hello in staging: 1.2.0 → 1.1.0',
    );
    expect(
      renderRollbackTitle('staging', '', [
        { app: 'hello', from: '1.2.0', to: '1.1.0' },
        { app: 'world', from: '2.1.0', to: '2.0.0' },
      ]),
    ).toBe('Roll back 2 apps in staging');
  });

  const target = (d?: string) => ({
    path: 'apps/hello/overlays/staging/kustomization.yaml',
    text: `images:\n  - {name: ghcr.io/example/hello, newTag: 1.2.0${d ? `, digest: ${d}` : ''}}\n`,
  });

  it('plans the pull request: title, why, the change that brought the good version, what sticks', () => {
    const plan = planPromotion({
      source: 'staging (history)',
      target: 'staging',
      app: 'hello',
      apps: [
        {
          app: 'hello',
          sourceFiles: [],
          targetFiles: [target(digest('b'))],
          versions: new Map([[image, { name: image, repository: image, tag: '1.1.0', digest: digest('a') }]]),
        },
      ],
      because: record().because,
      rollback: { source: 'dev', restores: { sha: 'c'.repeat(40), sources: ['#3', '#5'] } },
    });
    expect(plan.title).toBe('Roll back hello in staging: 1.2.0 → 1.1.0');
    expect(plan.commitMessage.split('\n')[0]).toBe('Roll back hello in staging: 1.2.0 → 1.1.0');
    expect(plan.updates).toEqual([
      {
        path: 'apps/hello/overlays/staging/kustomization.yaml',
        content: `images:\n  - {name: ghcr.io/example/hello, newTag: 1.1.0, digest: ${digest('a')}}\n`,
      },
    ]);
    const lines = plan.body.split('\n');
    expect(lines[0]).toBe('Escalator rolls **staging** back to versions it ran before.');
    expect(lines).toContain(`**Provenance:** \`1.1.0\` last came into staging with commit ${'c'.repeat(40)} (#3 → #5)`);
    // Repository text is escaped for markdown (`1\.2\.0`): read it as a person does.
    expect(plan.body.replaceAll('\\', '')).toContain('**Why:** hello 1.2.0 went Degraded in staging at 12:03 for 5m');
    expect(plan.body).toContain(
      'Escalator proposes the versions it takes out again only when dev runs another version, or when a person comments /escalator promote.',
    );
    expect(plan.body).not.toContain('A newer version in');
  });

  it('when the version to go back to has no digest on record, refuses with that reason, never "the event"', () => {
    const plan = planPromotion({
      source: 'staging (history)',
      target: 'staging',
      app: 'hello',
      apps: [
        {
          app: 'hello',
          sourceFiles: [],
          targetFiles: [target(digest('b'))],
          versions: new Map([[image, { name: image, repository: image, tag: '1.1.0' }]]),
        },
      ],
      rollback: { source: 'dev' },
    });
    expect(plan.updates).toEqual([]);
    expect(plan.refused.map((r) => r.reason)).toEqual([
      'images[0] pins a digest but no digest of 1.1.0 is on record to roll back to (this environment ran it by tag); roll back by hand with ghcr.io/example/hello:1.1.0@sha256:… (or remove the pin)',
    ]);
    expect(plan.refused.some((r) => r.reason.includes('event'))).toBe(false);
  });

  it('a promotion from a source without a digest into a pinned file names the source, not an event', () => {
    const plan = planPromotion({
      source: 'staging',
      target: 'prod',
      app: 'hello',
      apps: [
        {
          app: 'hello',
          sourceFiles: [
            {
              path: 'apps/hello/overlays/staging/kustomization.yaml',
              text: 'images:\n  - {name: ghcr.io/example/hello, newTag: 1.1.0}\n',
            },
          ],
          targetFiles: [
            {
              path: 'apps/hello/overlays/prod/kustomization.yaml',
              text: `images:\n  - {name: ghcr.io/example/hello, newTag: 1.0.0, digest: ${digest('a')}}\n`,
            },
          ],
        },
      ],
    });
    expect(plan.refused.map((r) => r.reason)).toEqual([
      'images[0] pins a digest but the environment it is promoted from runs 1.1.0 without one; pin the digest there first (or remove the pin here)',
    ]);
  });
});

describe('what a person sees on the promotion out of the rolled-back environment', () => {
  const app = (note?: string): HealthGateApp => ({
    app: 'hello',
    running: 'hello 1.2.0',
    merge: { sha: 'a'.repeat(40), at: '2026-12-05T12:00:00.000Z' },
    health: {
      revision: 'a'.repeat(40),
      sync: 'synced',
      health: 'degraded',
      degradedSince: '2026-12-05T12:03:00.000Z',
      reportedAt: '2026-12-05T12:03:00.000Z',
      source: { agent: 'argocd', object: 'hello-staging' },
    },
    containsMerge: true,
    expected: { agent: 'argocd', object: 'hello-staging' },
    ...(note ? { note } : {}),
  });
  const gate = (note?: string) =>
    planHealthGate({
      source: 'staging',
      apps: [app(note)],
      tolerateMs: 60_000,
      tolerateText: '60s',
      timeoutMs: 900_000,
      timeoutText: '15m',
      now: Date.parse('2026-12-05T12:08:00.000Z'),
    }).gate;

  it('a rollback that could not be written: the failed health gate says why', () => {
    const refused = record({
      state: 'refused',
      refused: 'Escalator could not change apps/hello/overlays/staging/kustomization.yaml:2 (…)',
    });
    const note = rollbackNote(refused, [v('1.2.0', digest('b'))]);
    expect(note).toBe(
      'the automatic rollback to hello 1.1.0 could not be written: Escalator could not change apps/hello/overlays/staging/kustomization.yaml:2 (…)',
    );
    expect(gate(note)).toEqual({
      name: 'health',
      state: 'failed',
      detail: `staging runs hello 1.2.0 Degraded for 5m, longer than the 60s tolerated (Argo CD app hello-staging, synced to aaaaaaa); promotion halts until it reports healthy; ${note}`,
    });
  });

  it('a halt: the gate says how a person lifts it', () => {
    expect(rollbackNote(record({ state: 'halted' }), [v('1.1.0', digest('a'))])).toBe(
      'halted after rolling back from 1.2.0: comment /escalator release staging hello to lift it',
    );
  });

  it('says nothing about a rollback that went well, or about other versions', () => {
    expect(rollbackNote(record(), [v('1.1.0', digest('a'))])).toBeUndefined();
    expect(rollbackNote(record({ state: 'refused' }), [v('1.3.0')])).toBeUndefined();
    expect(gate(undefined).detail).not.toContain('rollback');
  });

  it('compares versions by image and tag, and by digest where both have one', () => {
    expect(sameVersions([v('1.2.0')], [v('1.2.0', digest('b'))])).toBe(true);
    expect(sameVersions([v('1.2.0', digest('a'))], [v('1.2.0', digest('b'))])).toBe(false);
    expect(sameVersions([], [])).toBe(false);
  });
});
