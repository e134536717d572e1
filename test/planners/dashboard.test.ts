/**
 * The dashboard issue's body, byte for byte: `test/fixtures/dashboard/<case>.md`.
 * `UPDATE_GOLDEN=1` rewrites them (then review the diff).
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  actionCommand,
  DASHBOARD_MARKER,
  ISSUE_BODY_LIMIT,
  renderDashboard,
  tickedActions,
  type DashboardInput,
} from '../../src/planners/dashboard.js';

const now = Date.parse('2026-12-07T10:00:00Z');
const fixtures = new URL('../fixtures/dashboard/', import.meta.url);

function golden(name: string, body: string): void {
  const file = new URL(`${name}.md`, fixtures);
  if (process.env.UPDATE_GOLDEN === '1') writeFileSync(file, body);
  expect(existsSync(file), `${file.pathname} is missing: run with UPDATE_GOLDEN=1 and review it`).toBe(true);
  expect(body).toBe(readFileSync(file, 'utf8'));
}

const hello = { name: 'ghcr.io/example/hello', tag: '1.4.2', digest: 'sha256:abc1234def5678' };
const world = { name: 'ghcr.io/example/world', tag: '2.0.0' };

const small: DashboardInput = {
  repository: 'example/gitops',
  now,
  environments: [
    {
      name: 'dev',
      from: 'registry',
      autoMerge: true,
      holds: [],
      cells: [
        {
          app: 'hello',
          versions: [{ ...hello, tag: '1.5.0', digest: 'sha256:fedcba9876543' }],
          since: '2026-12-07T09:40:00.000Z',
          soak: { target: 'staging', remainingMs: 10 * 60_000 },
        },
        {
          app: 'world',
          versions: [world],
          since: '2026-12-01T08:00:00.000Z',
          soak: { target: 'staging', remainingMs: 0 },
        },
      ],
    },
    {
      name: 'staging',
      from: 'dev',
      autoMerge: true,
      holds: [{ app: '', by: '@alice' }],
      cells: [
        {
          app: 'hello',
          versions: [hello],
          since: '2026-12-05T07:50:00.000Z',
          health: {
            revision: 'a'.repeat(40),
            sync: 'synced',
            health: 'healthy',
            healthySince: '2026-12-07T07:50:00.000Z',
            reportedAt: '2026-12-07T09:59:00.000Z',
            source: { agent: 'argocd', object: 'hello-staging' },
          },
        },
        {
          app: 'world',
          versions: [world],
          since: '2026-12-01T09:00:00.000Z',
          health: {
            revision: 'b'.repeat(40),
            sync: 'synced',
            health: 'degraded',
            degradedSince: '2026-12-07T09:45:00.000Z',
            reportedAt: '2026-12-07T09:59:00.000Z',
            source: { agent: 'flux', object: 'flux-system/apps-staging' },
          },
        },
      ],
    },
    {
      name: 'prod',
      from: 'staging',
      autoMerge: false,
      holds: [],
      window: {
        open: false,
        sentence:
          'prod takes no automatic merge now: it is outside every allowed window; opens Mon 13:00 Europe/Berlin',
      },
      cells: [
        {
          app: 'hello',
          versions: [{ ...hello, tag: '1.4.1', digest: 'sha256:0011223344556' }],
          since: '2026-11-30T12:00:00.000Z',
        },
        { app: 'world', versions: [{ ...world, tag: '1.9.0' }] },
      ],
    },
  ],
  pulls: [
    {
      number: 12,
      title: 'Promote hello 1.4.2 to prod',
      kind: 'promote',
      environment: 'prod',
      app: 'hello',
      gates: [
        { name: 'soak', state: 'passed', detail: 'ran in staging for at least 2h' },
        { name: 'hold', state: 'passed', detail: 'no hold' },
        {
          name: 'window',
          state: 'pending',
          detail:
            'prod takes no automatic merge now: it is outside every allowed window; opens Mon 13:00 Europe/Berlin',
        },
        {
          name: 'freeze',
          state: 'failed',
          detail: 'prod frozen by @bob on 2026-12-07 09:00 UTC until /escalator unfreeze',
        },
      ],
    },
    { number: 13, title: 'Bump hello to 1.5.0 in dev', kind: 'bump', environment: 'dev', app: 'hello', gates: [] },
  ],
  freezes: [{ scope: 'prod', by: '@bob', at: '2026-12-07T09:00:00.000Z', reason: 'incident | 4711' }],
  attention: [
    {
      what: 'apps/world/overlays/prod/kustomization.yaml',
      reason: 'line 4: the tag is a template placeholder ({{ .Values.tag }}); Escalator does not edit it',
      at: '2026-12-07T08:00:00.000Z',
    },
  ],
};

describe('the dashboard body', () => {
  it('shows versions, since, health, soak, pull requests with gates, holds, freezes, windows and what needs a person', () => {
    golden('small', renderDashboard(small));
  });

  it('says when nothing holds anything back', () => {
    golden(
      'quiet',
      renderDashboard({
        ...small,
        pulls: [],
        freezes: [],
        attention: [],
        environments: small.environments
          .map((env) => ({ ...env, holds: [], window: undefined as never }))
          .map(({ window: _w, ...env }) => env),
      }),
    );
  });

  it("fits 500 apps × 5 environments within GitHub's limit, cutting the largest sections first and saying so", () => {
    const names = ['dev', 'qa', 'staging', 'canary', 'prod'];
    const apps = Array.from({ length: 500 }, (_, i) => `service-${String(i).padStart(3, '0')}`);
    const input: DashboardInput = {
      repository: 'example/big',
      now,
      freezes: [],
      attention: [],
      pulls: apps.slice(0, 200).map((app, i) => ({
        number: 1000 + i,
        title: `Promote ${app} 3.1.${i} to prod`,
        kind: 'promote' as const,
        environment: 'prod',
        app,
        gates: [
          {
            name: 'soak',
            state: 'pending' as const,
            detail: `staging must run these versions for 2h; ready at 2026-12-07T11:${String(i % 60).padStart(2, '0')}:00.000Z`,
          },
          { name: 'hold', state: 'passed' as const, detail: 'no hold' },
        ],
      })),
      environments: names.map((name, e) => ({
        name,
        from: e === 0 ? 'registry' : names[e - 1]!,
        autoMerge: e < 3,
        holds: [],
        cells: apps.map((app, i) => ({
          app,
          versions: [
            {
              name: `ghcr.io/example/${app}`,
              tag: `3.${e}.${i}`,
              digest: `sha256:${(i * 7919 + e).toString(16).padStart(12, '0')}`,
            },
          ],
          since: '2026-12-06T10:00:00.000Z',
          ...(e < 4 ? { soak: { target: names[e + 1]!, remainingMs: (i % 7) * 600_000 } } : {}),
        })),
      })),
    };
    const body = renderDashboard(input);
    expect(body.length).toBeLessThanOrEqual(ISSUE_BODY_LIMIT);
    expect(body.length).toBeGreaterThan(ISSUE_BODY_LIMIT - 2_000);
    expect(body).toContain("Too much to show within GitHub's 65,536 characters");
    expect(body.match(/more apps not shown: the issue body is limited to 65,536 characters/g)?.length).toBe(5);
    // Every environment keeps its own folded section.
    expect(body.match(/^<details>$/gm)?.length).toBe(5);
    golden('500x5', body);
  });
});

describe('ticked boxes', () => {
  const body = renderDashboard(small);
  const tick = (text: string, label: string) => text.replace(`- [ ] ${label}`, `- [x] ${label}`);

  it('are the boxes ticked in this edit, read as the commands they stand for', () => {
    expect(body.startsWith(DASHBOARD_MARKER)).toBe(true);
    const after = tick(tick(body, 'promote hello to prod now'), 'release staging');
    const actions = tickedActions(body, after);
    expect(actions).toEqual([
      { kind: 'release', environment: 'staging' },
      { kind: 'promote', environment: 'prod', app: 'hello' },
    ]);
    expect(actions.map(actionCommand)).toEqual(['/escalator release staging', '/escalator promote prod hello']);
  });

  it('act once: a box already ticked before the edit is not asked again', () => {
    const ticked = tick(body, 'unfreeze prod');
    expect(tickedActions(ticked, ticked.replace('Tick a box', 'Tick one box'))).toEqual([]);
  });

  it('ignore boxes whose marker is not an action, and boxes outside list items', () => {
    const forged = `${body}\n- [x] oops <!-- escalator:do promote prod hello; rm -rf -->\n  [x] x <!-- escalator:do hold prod -->\n`;
    expect(tickedActions(body, forged)).toEqual([]);
  });
});
