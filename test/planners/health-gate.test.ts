import { describe, expect, it } from 'vitest';
import {
  deploymentState,
  formatSpan,
  newestChange,
  rollbackReason,
  sustainedBad,
  planHealthGate,
  type HealthGateApp,
  type HealthGateInput,
} from '../../src/planners/health-gate.js';
import { planGates, type GateInput } from '../../src/planners/promotion-gates.js';
import type { AppHealth } from '../../src/planners/health.js';

const now = Date.parse('2026-12-04T12:00:00Z');
const ago = (ms: number): string => new Date(now - ms).toISOString();
const min = 60_000;
const MERGE = 'a'.repeat(40);
const NEWER = 'b'.repeat(40);
const OLDER = 'c'.repeat(40);
const source = {
  agent: 'argocd',
  object: 'hello-staging',
  url: 'https://argocd.example/applications/hello-staging',
} as const;

const healthy = (since: string, revision = NEWER): AppHealth => ({
  revision,
  sync: 'synced',
  health: 'healthy',
  healthySince: since,
  reportedAt: since,
  source,
});
const degraded = (since: string, revision = NEWER): AppHealth => ({
  revision,
  sync: 'synced',
  health: 'degraded',
  degradedSince: since,
  lastDegradedAt: since,
  reportedAt: since,
  source,
  message: 'Deployment hello has 0/3 ready replicas',
});
const app = (over: Partial<HealthGateApp> = {}): HealthGateApp => ({
  app: 'hello',
  running: 'hello 1.4.2',
  merge: { sha: MERGE, at: ago(5 * min) },
  expected: { agent: 'argocd', object: 'hello-staging' },
  ...over,
});
const input = (apps: HealthGateApp[]): HealthGateInput => ({
  source: 'staging',
  apps,
  tolerateMs: 60_000,
  tolerateText: '60s',
  timeoutMs: 15 * min,
  timeoutText: '15m',
  now,
});

describe('planHealthGate', () => {
  it('passes when the source reports synced and healthy on a revision containing the merge, and says so in the body line', () => {
    const decision = planHealthGate(
      input([app({ health: healthy(ago(130 * min)), containsMerge: true, merge: { sha: MERGE, at: ago(140 * min) } })]),
    );
    expect(decision.gate).toEqual({
      name: 'health',
      state: 'passed',
      detail: 'staging runs hello 1.4.2, healthy for 2h 10m (Argo CD app hello-staging, synced to bbbbbbb)',
    });
    expect(decision.healthySince).toEqual([ago(130 * min)]);
    expect(decision.lines).toEqual([decision.gate.detail]);
    expect(decision.recheckAt).toBeUndefined();
  });

  it('ignores a healthy report about a revision older than the merge: pending until the timeout', () => {
    const decision = planHealthGate(
      input([
        app({ health: healthy(ago(60 * min), OLDER), containsMerge: false, merge: { sha: MERGE, at: ago(5 * min) } }),
      ]),
    );
    expect(decision.gate.state).toBe('pending');
    expect(decision.gate.detail).toBe(
      'staging runs hello 1.4.2: waiting for Argo CD app hello-staging to report merge aaaaaaa synced and healthy (the last report (ccccccc, synced/healthy) is about a revision older than merge aaaaaaa)',
    );
    expect(decision.healthySince).toEqual([undefined]);
    expect(decision.recheckAt).toBe(now + 10 * min);
  });

  it('fails when no report came within the timeout of the merge, naming the agent object and how to configure it', () => {
    const decision = planHealthGate(input([app({ merge: { sha: MERGE, at: ago(15 * min) } })]));
    expect(decision.gate).toEqual({
      name: 'health',
      state: 'failed',
      detail:
        'no report from Argo CD app hello-staging on hello 1.4.2 within 15m of merge aaaaaaa (no report from Argo CD app hello-staging yet); check the Argo CD notifications subscription of that app (docs/health.md)',
    });
  });

  it('waits with no report before the timeout, and re-checks at the timeout', () => {
    const decision = planHealthGate(input([app({ merge: { sha: MERGE, at: ago(1 * min) } })]));
    expect(decision.gate.state).toBe('pending');
    expect(decision.recheckAt).toBe(now + 14 * min);
  });

  it('tolerates a 30 s Degraded spell: pending, re-checked when the tolerance ends', () => {
    const decision = planHealthGate(input([app({ health: degraded(ago(30_000)), containsMerge: true })]));
    expect(decision.gate.state).toBe('pending');
    expect(decision.gate.detail).toBe(
      'staging runs hello 1.4.2 Degraded for 30s, within the 60s tolerated (Argo CD app hello-staging, synced to bbbbbbb)',
    );
    expect(decision.recheckAt).toBe(now + 30_000);
  });

  it("fails on a sustained Degraded, with the agent's own words", () => {
    const decision = planHealthGate(input([app({ health: degraded(ago(5 * min)), containsMerge: true })]));
    expect(decision.gate).toEqual({
      name: 'health',
      state: 'failed',
      detail:
        'staging runs hello 1.4.2 Degraded for 5m, longer than the 60s tolerated (Argo CD app hello-staging, synced to bbbbbbb: Deployment hello has 0/3 ready replicas); promotion halts until it reports healthy',
    });
  });

  it('fails at once on a failed sync', () => {
    const decision = planHealthGate(
      input([
        app({
          health: {
            ...healthy(ago(min)),
            sync: 'failed',
            healthySince: undefined,
            message: 'one or more objects failed to apply',
          },
          containsMerge: true,
        }),
      ]),
    );
    expect(decision.gate.state).toBe('failed');
    expect(decision.gate.detail).toBe(
      'staging failed to sync hello 1.4.2 (Argo CD app hello-staging, synced to bbbbbbb: one or more objects failed to apply); promotion halts until it syncs and reports healthy',
    );
  });

  it('waits while progressing and fails past the timeout', () => {
    const progressing: AppHealth = { ...healthy(ago(min)), health: 'progressing', healthySince: undefined };
    expect(planHealthGate(input([app({ health: progressing, containsMerge: true })])).gate.state).toBe('pending');
    const late = planHealthGate(
      input([app({ health: progressing, containsMerge: true, merge: { sha: MERGE, at: ago(16 * min) } })]),
    );
    expect(late.gate.state).toBe('failed');
    expect(late.gate.detail).toBe(
      'hello 1.4.2 is not synced and healthy in staging within 15m of merge aaaaaaa: Argo CD app hello-staging last said synced/progressing',
    );
  });

  it('counts healthy-since from the merge when the app was healthy before it (it carried on at a newer revision)', () => {
    const decision = planHealthGate(input([app({ health: healthy(ago(300 * min)), containsMerge: true })]));
    expect(decision.healthySince).toEqual([ago(5 * min)]);
  });

  it('two apps in one commit: one healthy, one still waiting → pending; each app gets its line', () => {
    const decision = planHealthGate(
      input([
        app({ health: healthy(ago(4 * min)), containsMerge: true }),
        app({ app: 'world', running: 'world 2.0.0', expected: { agent: 'argocd', object: 'world-staging' } }),
      ]),
    );
    expect(decision.gate.state).toBe('pending');
    expect(decision.gate.detail).toBe(
      'staging runs world 2.0.0: waiting for Argo CD app world-staging to report merge aaaaaaa synced and healthy (no report from Argo CD app world-staging yet)',
    );
    expect(decision.lines).toHaveLength(2);
    expect(decision.healthySince).toEqual([ago(4 * min), undefined]);
  });

  it('two apps in one commit: one degraded for long → the whole gate fails', () => {
    const decision = planHealthGate(
      input([
        app({ health: healthy(ago(10 * min)), containsMerge: true }),
        app({ app: 'world', running: 'world 2.0.0', health: degraded(ago(3 * min)), containsMerge: true }),
      ]),
    );
    expect(decision.gate.state).toBe('failed');
  });
});

describe('planGates with health', () => {
  const base: GateInput = {
    source: 'staging',
    target: 'prod',
    soakMs: 30 * min,
    soakText: '30m',
    rollback: false,
    firstSeen: [ago(300 * min)],
    hold: undefined,
    now,
  };

  it('soak counts from healthy-since, not from the merge', () => {
    const health = planHealthGate(input([app({ health: healthy(ago(4 * min)), containsMerge: true })]));
    const decision = planGates({ ...base, health });
    expect(decision.gates.map((gate) => [gate.name, gate.state])).toEqual([
      ['health', 'passed'],
      ['soak', 'pending'],
      ['hold', 'passed'],
    ]);
    expect(decision.readyAt).toBe(now + 26 * min);
    expect(decision.gates[1]?.detail).toBe(
      'staging must run these versions healthy for 30m; ready at 2026-12-04T12:26:00.000Z',
    );
  });

  it('a newer version superseding while soaking: its soak starts over from its own healthy-since', () => {
    // 1.4.2 was healthy 25 minutes; 1.4.3 landed 5 minutes ago and is healthy since 2 minutes.
    const older = planGates({
      ...base,
      health: planHealthGate(
        input([app({ health: healthy(ago(25 * min)), containsMerge: true, merge: { sha: MERGE, at: ago(26 * min) } })]),
      ),
    });
    expect(older.readyAt).toBe(now + 5 * min);
    const newer = planGates({
      ...base,
      health: planHealthGate(
        input([
          app({
            running: 'hello 1.4.3',
            health: healthy(ago(2 * min)),
            containsMerge: true,
            merge: { sha: NEWER, at: ago(5 * min) },
          }),
        ]),
      ),
    });
    expect(newer.readyAt).toBe(now + 28 * min);
    expect(newer.gates[1]?.state).toBe('pending');
  });

  it('while health waits, soak waits for it and the health re-check time comes out', () => {
    const decision = planGates({
      ...base,
      health: planHealthGate(input([app({ merge: { sha: MERGE, at: ago(min) } })])),
    });
    expect(decision.gates[1]).toEqual({
      name: 'soak',
      state: 'pending',
      detail: 'staging must run these versions healthy for 30m, counted from when it reports them healthy',
    });
    expect(decision.healthRecheckAt).toBe(now + 14 * min);
  });

  it('a 30 s Degraded spell after running healthy keeps healthy-since: the soak is not reset, nothing merges during it', () => {
    // As recorded by the fold: healthy-since survives a spell shorter than tolerate.
    const blip: AppHealth = { ...degraded(ago(30_000)), healthySince: ago(4 * min) };
    const health = planHealthGate(input([app({ health: blip, containsMerge: true })]));
    expect(health.gate.state).toBe('pending');
    expect(health.healthySince).toEqual([ago(4 * min)]);
    const decision = planGates({ ...base, health });
    expect(decision.readyAt).toBe(now + 26 * min);
    expect(decision.gates[1]?.detail).toBe(
      'staging must run these versions healthy for 30m; ready at 2026-12-04T12:26:00.000Z',
    );
    expect(decision.healthRecheckAt).toBe(now + 30_000);
  });

  it('a rollback waits for no health gate', () => {
    const decision = planGates({
      ...base,
      rollback: true,
      health: planHealthGate(input([app({ merge: { sha: MERGE, at: ago(min) } })])),
    });
    expect(decision.gates.map((gate) => gate.name)).toEqual(['hold']);
  });
});

describe('formatSpan', () => {
  it.each([
    [0, '0s'],
    [30_000, '30s'],
    [130 * min, '2h 10m'],
    [120 * min, '2h'],
    [(26 * 60 + 5) * min, '1d 2h'],
  ])('%d ms → %s', (ms, text) => expect(formatSpan(ms)).toBe(text));
});

describe('rollback and deployments', () => {
  const spell = '2026-12-04T12:03:00.000Z';
  const at = Date.parse('2026-12-04T12:08:00.000Z');
  const bad: AppHealth = { ...degraded(spell), message: 'Deployment hello: 0/3 ready' };

  it('says why an automatic rollback happens, as the pull request opens with it', () => {
    expect(
      rollbackReason({
        environment: 'staging',
        running: 'hello 1.4.2',
        health: bad,
        target: { tags: ['1.4.1'], until: '2026-12-04T12:01:00.000Z' },
        now: at,
      }),
    ).toBe(
      'hello 1.4.2 went Degraded in staging at 12:03 for 5m (Argo CD app hello-staging: Deployment hello: 0/3 ready); rolling back to 1.4.1, healthy there until 12:01',
    );
  });

  it('acts on a failed sync at once and on a degraded spell once it outlasts tolerate', () => {
    expect(sustainedBad(bad, 60_000, Date.parse(spell) + 30_000)).toBe(false);
    expect(sustainedBad(bad, 60_000, Date.parse(spell) + 60_000)).toBe(true);
    expect(sustainedBad({ ...healthy(spell), sync: 'failed' }, 60_000, Date.parse(spell))).toBe(true);
    expect(sustainedBad(healthy(spell), 60_000, at)).toBe(false);
  });

  it('maps health onto deployment states', () => {
    expect(deploymentState(healthy(spell), 60_000, at)).toEqual({
      state: 'success',
      description: 'synced and healthy (Argo CD app hello-staging at bbbbbbb)',
    });
    expect(deploymentState(bad, 60_000, Date.parse(spell) + 10_000).state).toBe('in_progress');
    expect(deploymentState(bad, 60_000, at)).toEqual({
      state: 'failure',
      description: 'degraded (Argo CD app hello-staging at bbbbbbb)',
    });
  });
});

describe('health gate of a promotion carrying configuration changes', () => {
  const CONFIG = 'd'.repeat(40);
  const base: GateInput = {
    source: 'staging',
    target: 'prod',
    soakMs: 30 * min,
    soakText: '30m',
    rollback: false,
    firstSeen: [ago(300 * min)],
    hold: undefined,
    now,
  };
  // The versions landed in staging an hour ago; the configuration change (#12) merged `landed` ago.
  const carrying = (landed: number, over: Partial<HealthGateApp> = {}): HealthGateApp =>
    app({ merge: { sha: MERGE, at: ago(60 * min) }, config: { sha: CONFIG, at: ago(landed), pull: 12 }, ...over });
  // What the fold records when the agent names the change's merge: the landing of the versions, and the named commit.
  const reportedAtChange = (since: string): AppHealth => ({ ...healthy(since, MERGE), reported: CONFIG });

  it.each<{
    name: string;
    app: HealthGateApp;
    state: 'passed' | 'pending' | 'failed';
    detail: string;
    healthySince: string | undefined;
    recheckAt: number | undefined;
    readyAt: number;
  }>([
    {
      name: 'configuration only: a healthy report about the versions landing, older than the change, waits for the change',
      app: carrying(3 * min, { health: healthy(ago(50 * min), MERGE), containsMerge: true, containsConfig: false }),
      state: 'pending',
      detail:
        'staging runs hello 1.4.2: waiting for Argo CD app hello-staging to report configuration change ddddddd (#12) synced and healthy (the last report (aaaaaaa, synced/healthy) is about a revision older than configuration change ddddddd (#12))',
      healthySince: undefined,
      recheckAt: now + 12 * min,
      readyAt: now,
    },
    {
      name: 'configuration only: the agent named the change’s merge synced and healthy → passes, soak from the change’s landing',
      app: carrying(3 * min, { health: reportedAtChange(ago(50 * min)), containsMerge: true, containsConfig: true }),
      state: 'passed',
      detail: 'staging runs hello 1.4.2, healthy for 3m (Argo CD app hello-staging, synced to ddddddd)',
      healthySince: ago(3 * min),
      recheckAt: undefined,
      readyAt: now + 27 * min,
    },
    {
      name: 'configuration only: healthy since after the change landed → soak from healthy-since',
      app: carrying(10 * min, { health: reportedAtChange(ago(2 * min)), containsMerge: true, containsConfig: true }),
      state: 'passed',
      detail: 'staging runs hello 1.4.2, healthy for 2m (Argo CD app hello-staging, synced to ddddddd)',
      healthySince: ago(2 * min),
      recheckAt: undefined,
      readyAt: now + 28 * min,
    },
    {
      name: 'configuration only: an older healthy report does not pass, and fails past the timeout of the change',
      app: carrying(20 * min, { health: healthy(ago(50 * min), MERGE), containsMerge: true, containsConfig: false }),
      state: 'failed',
      detail:
        'no report from Argo CD app hello-staging on hello 1.4.2 within 15m of configuration change ddddddd (#12) (the last report (aaaaaaa, synced/healthy) is about a revision older than configuration change ddddddd (#12)); check the Argo CD notifications subscription of that app (docs/health.md)',
      healthySince: undefined,
      recheckAt: undefined,
      readyAt: now,
    },
    {
      name: 'configuration only, an app without images: no report yet waits for the change',
      app: app({ running: 'hello configuration', merge: undefined, config: { sha: CONFIG, at: ago(min), pull: 12 } }),
      state: 'pending',
      detail:
        'staging runs hello configuration: waiting for Argo CD app hello-staging to report configuration change ddddddd (#12) synced and healthy (no report from Argo CD app hello-staging yet)',
      healthySince: undefined,
      recheckAt: now + 14 * min,
      readyAt: now,
    },
    {
      name: 'versions and configuration, the change later: no report yet waits for the later of the two',
      app: app({ merge: { sha: MERGE, at: ago(10 * min) }, config: { sha: CONFIG, at: ago(4 * min), pull: 12 } }),
      state: 'pending',
      detail:
        'staging runs hello 1.4.2: waiting for Argo CD app hello-staging to report configuration change ddddddd (#12) synced and healthy (no report from Argo CD app hello-staging yet)',
      healthySince: undefined,
      recheckAt: now + 11 * min,
      readyAt: now,
    },
    {
      name: 'versions and configuration, the versions later: a report at the change but before the versions waits for their merge',
      app: app({
        merge: { sha: MERGE, at: ago(5 * min) },
        config: { sha: CONFIG, at: ago(20 * min), pull: 12 },
        health: healthy(ago(18 * min), CONFIG),
        containsMerge: false,
        containsConfig: true,
      }),
      state: 'pending',
      detail:
        'staging runs hello 1.4.2: waiting for Argo CD app hello-staging to report merge aaaaaaa synced and healthy (the last report (ddddddd, synced/healthy) is about a revision older than merge aaaaaaa)',
      healthySince: undefined,
      recheckAt: now + 10 * min,
      readyAt: now,
    },
    {
      name: 'versions and configuration: the versions reported but not the later change → waits for the change',
      app: app({
        merge: { sha: MERGE, at: ago(10 * min) },
        config: { sha: CONFIG, at: ago(4 * min), pull: 12 },
        health: healthy(ago(8 * min), MERGE),
        containsMerge: true,
        containsConfig: false,
      }),
      state: 'pending',
      detail:
        'staging runs hello 1.4.2: waiting for Argo CD app hello-staging to report configuration change ddddddd (#12) synced and healthy (the last report (aaaaaaa, synced/healthy) is about a revision older than configuration change ddddddd (#12))',
      healthySince: undefined,
      recheckAt: now + 11 * min,
      readyAt: now,
    },
    {
      name: 'versions and configuration, both reported: soak counts from the later landing',
      app: app({
        merge: { sha: MERGE, at: ago(10 * min) },
        config: { sha: CONFIG, at: ago(4 * min), pull: 12 },
        health: reportedAtChange(ago(8 * min)),
        containsMerge: true,
        containsConfig: true,
      }),
      state: 'passed',
      detail: 'staging runs hello 1.4.2, healthy for 4m (Argo CD app hello-staging, synced to ddddddd)',
      healthySince: ago(4 * min),
      recheckAt: undefined,
      readyAt: now + 26 * min,
    },
  ])('$name', ({ app: gateApp, state, detail, healthySince, recheckAt, readyAt }) => {
    const health = planHealthGate(input([gateApp]));
    expect(health.gate).toEqual({ name: 'health', state, detail });
    expect(health.healthySince).toEqual([healthySince]);
    expect(health.recheckAt).toBe(recheckAt);
    const decision = planGates({
      ...base,
      health,
      ...(gateApp.config ? { configLanded: [gateApp.config.at] } : {}),
    });
    expect(decision.gates.map((gate) => [gate.name, gate.state])).toEqual([
      ['health', state],
      ['soak', state === 'passed' && readyAt <= now ? 'passed' : 'pending'],
      ['hold', 'passed'],
    ]);
    if (state === 'passed') expect(decision.readyAt).toBe(readyAt);
    else
      expect(decision.gates[1]?.detail).toBe(
        'staging must run these versions healthy for 30m, counted from when it reports them healthy',
      );
  });

  it('picks the newest carried change by its landing, whatever the order', () => {
    const older = { sha: 'e'.repeat(40), at: ago(30 * min), pull: 11 };
    const newer = { sha: CONFIG, at: ago(4 * min), pull: 12 };
    expect(newestChange([newer, older])).toEqual(newer);
    expect(newestChange([older, newer])).toEqual(newer);
    expect(newestChange([])).toBeUndefined();
  });
});
