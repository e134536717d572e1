import { describe, expect, it } from 'vitest';
import { parseCommand } from '../../src/planners/commands.js';
import { planGates } from '../../src/planners/promotion-gates.js';
import { planPromotion, renderPlanReply, renderPromotionReply } from '../../src/planners/promotion-plan.js';

const file = (path: string, tag: string, digest?: string) => ({
  path,
  text: `images:\n  - name: ghcr.io/example/world\n    newTag: ${tag}\n${digest ? `    digest: ${digest}\n` : ''}`,
});
const pin = `sha256:${'0f'.repeat(32)}`;
const input = { source: 'staging', target: 'prod', app: 'world', rollback: false, requestedBy: 'alice' };

describe('what a promotion says to the person who asked for it', () => {
  const refused = planPromotion({
    source: 'staging',
    target: 'prod',
    app: 'world',
    apps: [
      {
        app: 'world',
        sourceFiles: [file('staging/kustomization.yaml', '2.5.0')],
        targetFiles: [file('prod/kustomization.yaml', '2.2.1', pin)],
      },
    ],
  });
  const equal = planPromotion({
    source: 'staging',
    target: 'prod',
    app: 'world',
    apps: [
      {
        app: 'world',
        sourceFiles: [file('staging/kustomization.yaml', '2.5.0')],
        targetFiles: [file('prod/kustomization.yaml', '2.5.0')],
      },
    ],
  });
  const moving = planPromotion({
    source: 'staging',
    target: 'prod',
    app: 'world',
    apps: [
      {
        app: 'world',
        sourceFiles: [file('staging/kustomization.yaml', '2.5.0')],
        targetFiles: [file('prod/kustomization.yaml', '2.2.1')],
      },
    ],
  });
  const gates = planGates({
    source: 'staging',
    target: 'prod',
    soakMs: 3_600_000,
    soakText: '1h',
    rollback: false,
    firstSeen: ['2026-01-01T00:00:00.000Z'],
    hold: undefined,
    now: Date.parse('2026-01-01T00:30:00.000Z'),
  }).gates;

  it.each([
    [
      'a pinned file the tag cannot move',
      refused,
      { kind: 'nothing' as const },
      'no pull request, because Escalator could not change these files safely:\n- `prod/kustomization.yaml',
    ],
    [
      'versions already equal',
      equal,
      { kind: 'nothing' as const },
      'nothing to change, prod already runs what staging runs.',
    ],
    [
      'an opened pull request',
      moving,
      { kind: 'opened' as const, pull: 12 },
      '#12 opened (Promote world 2\\.5\\.0 to prod).\n- ⏳ soak: staging must run these versions for 1h; ready at 2026\\-01\\-01T01:00:00\\.000Z',
    ],
    [
      'a closed pull request',
      equal,
      { kind: 'closed' as const, pull: 9 },
      'already runs these versions; #9 was closed.',
    ],
    [
      'a dry run',
      moving,
      { kind: 'dry-run' as const },
      'dry run (`dryRun: true`), nothing written. The plan is the `escalator/plan` check',
    ],
  ])('%s', (_what, plan, result, expected) => {
    const text = renderPromotionReply(input, plan, gates, result);
    expect(text.startsWith('@alice Promotion into **prod** for `world`: ')).toBe(true);
    expect(text).toContain(expected);
  });

  it('plans only promotions that change something, with their waiting gates, and lists refusals apart', () => {
    const text = renderPlanReply([
      { source: 'staging', target: 'prod', app: 'world', plan: refused, gates },
      { source: 'staging', target: 'prod', app: 'hello', plan: moving, gates },
    ]);
    expect(text.split('\n').filter((line) => line.startsWith('| prod'))).toEqual([
      '| prod | world | `ghcr.io/example/world` | `2.2.1` | `2.5.0` | ⏳ soak: staging must run these versions for 1h; ready at 2026\\-01\\-01T01:00:00\\.000Z |',
    ]);
    expect(text).toContain(
      '**prod** for `world`: these files cannot be promoted from staging as they are:\n- `prod/kustomization.yaml',
    );
    expect(renderPlanReply([])).toContain('Every environment already runs what its source runs');
  });

  it('skips a soak on the record with --now, and only promote takes it', () => {
    expect(parseCommand('/escalator promote prod world --now')).toEqual({
      ok: true,
      command: { name: 'promote', environment: 'prod', app: 'world', now: true },
    });
    expect(parseCommand('/escalator promote --now prod')).toEqual({
      ok: true,
      command: { name: 'promote', environment: 'prod', now: true },
    });
    expect(parseCommand('/escalator promote prod --force')).toEqual({
      ok: false,
      message: 'unknown option "--force"; /escalator promote takes only --now',
    });
    expect(parseCommand('/escalator hold prod --now')).toEqual({
      ok: false,
      message: '/escalator hold takes no option ("--now"); only /escalator promote takes --now',
    });
    const skipped = planGates({
      source: 'staging',
      target: 'prod',
      soakMs: 3_600_000,
      soakText: '1h',
      rollback: false,
      firstSeen: [undefined],
      hold: '@bob',
      soakSkippedBy: '@alice',
      now: 0,
    });
    expect(skipped.gates).toEqual([
      {
        name: 'soak',
        state: 'passed',
        detail: 'skipped by @alice with /escalator promote prod --now (the 1h soak in staging was not waited for)',
      },
      {
        name: 'hold',
        state: 'failed',
        detail: 'promotion into prod is on hold (@bob); comment /escalator release to lift it',
      },
    ]);
  });
});
