import { describe, expect, it } from 'vitest';
import { renderDashboard } from '../../src/planners/dashboard.js';
import { planGates } from '../../src/planners/promotion-gates.js';
import { planPromotion, renderPlanReply } from '../../src/planners/promotion-plan.js';
import { parseMarker, renderMarker } from '../../src/planners/pull-marker.js';

const kustomization = (tag: string) => `images:\n  - name: ghcr.io/example/hello\n    newTag: ${tag}\n`;
const config = {
  updates: [
    { path: 'apps/hello/overlays/staging/env.yaml', content: 'LOG_LEVEL: debug\n' },
    { path: 'apps/hello/overlays/staging/kustomization.yaml', content: `${kustomization('1.0.0')}namePrefix: s-\n` },
  ],
  deletions: ['apps/hello/overlays/staging/old.yaml'],
  ids: ['dev:1111111111111111111111111111111111111111'],
  carried: 1,
  section: ['', '**Configuration** from dev for `hello`, in the order it landed there'],
};

describe('a promotion carrying configuration', () => {
  const input = (sourceTag: string) => ({
    source: 'dev',
    target: 'staging',
    app: 'hello',
    apps: [
      {
        app: 'hello',
        sourceFiles: [{ path: 'apps/hello/overlays/dev/kustomization.yaml', text: kustomization(sourceTag) }],
        // The target's files as the configuration changes leave them (the job overlays them).
        targetFiles: [
          { path: 'apps/hello/overlays/staging/kustomization.yaml', text: `${kustomization('1.0.0')}namePrefix: s-\n` },
        ],
      },
    ],
    config,
  });

  it('with configuration only: its own title, no versions table, its files, deletions and marker', () => {
    const plan = planPromotion(input('1.0.0'));
    expect(plan.title).toBe('Promote hello configuration to staging');
    expect(plan.rows).toEqual([]);
    expect(plan.configCarried).toBe(1);
    expect(plan.updates).toEqual(config.updates);
    expect(plan.deletions).toEqual(config.deletions);
    expect(plan.body).not.toContain('| App | Image |');
    expect(plan.body).toContain('**Configuration** from dev');
    expect(plan.marker.config).toEqual(config.ids);
    expect(plan.commitMessage).toBe(
      'Promote hello configuration to staging\n\nconfiguration: 1 change from dev\n  apps/hello/overlays/staging/env.yaml\n  apps/hello/overlays/staging/kustomization.yaml\n  apps/hello/overlays/staging/old.yaml (deleted)\n',
    );
  });

  it('with a version: the image edit goes on top of the configuration in the same file', () => {
    const plan = planPromotion(input('1.1.0'));
    expect(plan.title).toBe('Promote hello 1.1.0 and its configuration to staging');
    expect(plan.updates).toEqual([
      config.updates[0],
      { path: 'apps/hello/overlays/staging/kustomization.yaml', content: `${kustomization('1.1.0')}namePrefix: s-\n` },
    ]);
    expect(plan.body).toContain('| App | Image |');
  });

  it('without configuration: titles and bodies as before', () => {
    const { config: _, ...plain } = input('1.1.0');
    const plan = planPromotion(plain);
    expect(plan.title).toBe('Promote hello 1.1.0 to staging');
    expect(plan.deletions).toEqual([]);
    expect(plan.marker.config).toBeUndefined();
  });
});

describe('the marker', () => {
  it('round-trips the configuration changes and refuses a forged list', () => {
    const marker = { kind: 'promote' as const, environment: 'staging', app: 'hello', images: [], config: ['dev:abc'] };
    expect(parseMarker(renderMarker(marker))).toEqual(marker);
    expect(parseMarker(renderMarker({ ...marker, config: [42 as unknown as string] }))).toBeNull();
  });
});

describe('soak with configuration', () => {
  it('counts from the last configuration change to land as well', () => {
    const now = Date.parse('2026-12-06T00:10:00Z');
    const decision = planGates({
      source: 'dev',
      target: 'staging',
      soakMs: 600_000,
      soakText: '10m',
      rollback: false,
      firstSeen: ['2026-12-05T00:00:00Z'],
      configLanded: ['2026-12-06T00:05:00Z'],
      hold: undefined,
      now,
    });
    expect(decision.readyAt).toBe(Date.parse('2026-12-06T00:15:00Z'));
    expect(decision.gates.find((gate) => gate.name === 'soak')?.state).toBe('pending');
  });
});

describe('/escalator plan and the dashboard', () => {
  it('the plan lists waiting configuration changes beside versions, and why one is not promoted', () => {
    const text = renderPlanReply([
      {
        source: 'dev',
        target: 'staging',
        app: 'hello',
        plan: { rows: [], refused: [], missing: [] },
        gates: [{ name: 'soak', state: 'pending', detail: 'ready at 10:15' }],
        config: [
          { app: 'hello', pull: '#12 Debug (@alice)', outcome: 'carried', why: [] },
          { app: 'hello', pull: '#13 Warn (@bob)', outcome: 'blocked', why: ['staging keeps `LOG_LEVEL: warn`'] },
        ],
      },
    ]);
    expect(text).toBe(
      [
        '**Escalator plan** (nothing was changed)',
        '',
        '**Configuration changes waiting**',
        '',
        '| Into | App | Change | Would be | Gates |',
        '|---|---|---|---|---|',
        '| staging | hello | #12 Debug (@alice) | carried | ⏳ soak: ready at 10:15 |',
        '| staging | hello | #13 Warn (@bob) | ⛔ not promoted: staging keeps `LOG_LEVEL: warn` | — |',
      ].join('\n'),
    );
  });

  it('the dashboard says an environment’s configuration differs from the previous one', () => {
    const body = renderDashboard({
      repository: 'acme/gitops',
      environments: [
        {
          name: 'staging',
          from: 'dev',
          autoMerge: false,
          cells: [],
          holds: [],
          configWaiting: [{ app: 'hello', pulls: [12, 13], blocked: 1 }],
        },
      ],
      pulls: [],
      freezes: [],
      attention: [],
      now: 0,
    });
    expect(body).toContain('<summary><b>staging</b> — 0 apps, from dev, configuration differs from dev</summary>');
    expect(body).toContain(
      '- configuration of `hello` differs from dev: #12, #13 wait to come here (1 cannot be promoted: /escalator plan says why)',
    );
  });
});
