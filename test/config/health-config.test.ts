import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../../src/cli/index.js';
import { parseRepoConfig } from '../../src/config/repo-config.js';

/** `environments[].health` and `rollback`: what is accepted, and each mistake with its line and column. */
const base = 'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n';
const OBJECT_HINT =
  'write the name as the agent shows it, with {app} for the app and * for any run of characters, like "{app}-staging" or "flux-system/apps-staging"';
const SOURCE_HINT =
  'add argocd: "{app}-<environment>", flux: "<namespace>/<kustomization>" or statuses: [{ context: "<context>", user: "<login>" }]';
const statusFix = (context: string) =>
  `write { context: ${JSON.stringify(context)}, user: "<login whose token the agent posts with>" }, or app: "<GitHub App slug or id>" instead of user (docs/health.md, "Who may speak for an environment")`;

describe('environments[].health', () => {
  it('fills in the defaults', () => {
    const result = parseRepoConfig(`${base}    health: { argocd: "argocd/{app}-dev" }\n`);
    expect(result.ok && result.config.environments[0]).toMatchObject({
      health: { argocd: 'argocd/{app}-dev', statuses: [], tolerate: '60s', timeout: '15m', deployments: true },
      rollback: 'manual',
    });
  });

  it('accepts each agent, * and {app}', () => {
    const result = parseRepoConfig(
      `${base}    health:\n      flux: "flux-system/apps-dev"\n      statuses:\n        - { context: "kustomization/{app}-dev/*", user: flux-bot }\n        - { context: "continuous-delivery/*", app: argocd-notifications }\n        - { context: "dev", app: 123456 }\n      tolerate: 2m\n      timeout: 1h\n      deployments: false\n    rollback: auto\n`,
    );
    expect(result.ok && result.config.environments[0]?.health?.statuses).toEqual([
      { context: 'kustomization/{app}-dev/*', user: 'flux-bot' },
      { context: 'continuous-delivery/*', app: 'argocd-notifications' },
      { context: 'dev', app: 123456 },
    ]);
  });

  describe('when it is wrong', () => {
    it.each([
      [
        'names no agent',
        '    health: {}\n',
        {
          line: 5,
          col: 13,
          path: 'environments[0].health',
          message: 'health names no agent to listen to',
          hint: SOURCE_HINT,
        },
      ],
      [
        'has only an empty statuses list',
        '    health:\n      statuses: []\n      tolerate: 30s\n',
        {
          line: 5,
          col: 5,
          path: 'environments[0].health',
          message: 'health names no agent to listen to',
          hint: SOURCE_HINT,
        },
      ],
      [
        'uses a placeholder other than {app}',
        '    health:\n      argocd: "{application}-dev"\n',
        {
          line: 6,
          col: 15,
          path: 'environments[0].health.argocd',
          message: '"{application}-dev" is not an agent object name',
          hint: OBJECT_HINT,
        },
      ],
      [
        'names a Kustomization with a space',
        '    health:\n      flux: "apps dev"\n',
        {
          line: 6,
          col: 13,
          path: 'environments[0].health.flux',
          message: '"apps dev" is not an agent object name',
          hint: OBJECT_HINT,
        },
      ],
      [
        'has a bad status context',
        '    health:\n      statuses: [{ context: "ok/*", user: a }, { context: "bad context!", user: a }]\n',
        {
          line: 6,
          col: 59,
          path: 'environments[0].health.statuses[1].context',
          message: '"bad context!" is not an agent object name',
          hint: OBJECT_HINT,
        },
      ],
      [
        'has a status context that names no poster (a config from before posters were bound)',
        '    health:\n      statuses: ["kustomization/apps-dev/*"]\n',
        {
          line: 6,
          col: 18,
          path: 'environments[0].health.statuses[0]',
          message:
            'status context "kustomization/apps-dev/*" names no poster: anyone who can write to the repository could post it',
          hint: statusFix('kustomization/apps-dev/*'),
        },
      ],
      [
        'has a status mapping with neither app nor user',
        '    health:\n      statuses:\n        - context: deploy-dev\n',
        {
          line: 7,
          col: 11,
          path: 'environments[0].health.statuses[0]',
          message: 'status context "deploy-dev" names no poster: anyone who can write to the repository could post it',
          hint: statusFix('deploy-dev'),
        },
      ],
      [
        'has a status mapping with both app and user',
        '    health:\n      statuses: [{ context: deploy-dev, app: argocd, user: flux-bot }]\n',
        {
          line: 6,
          col: 18,
          path: 'environments[0].health.statuses[0]',
          message: 'status context "deploy-dev" names both an app and a user',
          hint: 'keep the one the agent posts as: app for a GitHub App, user for a personal token',
        },
      ],
      [
        "binds a user that is an App's bot account",
        '    health:\n      statuses: [{ context: deploy-dev, user: "argocd-notifications[bot]" }]\n',
        {
          line: 6,
          col: 47,
          path: 'environments[0].health.statuses[0].user',
          message: '"argocd-notifications[bot]" is a GitHub App\'s bot account, not a user',
          hint: 'write app: "argocd-notifications" instead of user:',
        },
      ],
      [
        'has a tolerate that is no duration',
        '    health:\n      argocd: "{app}-dev"\n      tolerate: soon\n',
        {
          line: 7,
          col: 17,
          path: 'environments[0].health.tolerate',
          message: 'invalid duration "soon"',
          hint: 'write a whole number and a unit: 30s, 10m, 2h, 1d, or combined like 1h30m',
        },
      ],
      [
        'has an unknown key',
        '    health:\n      argocd: "{app}-dev"\n      agent: argo\n',
        {
          line: 7,
          col: 7,
          path: 'environments[0].health.agent',
          message: 'unknown key "agent"',
          hint: 'known keys: argocd, flux, statuses, tolerate, timeout, deployments',
        },
      ],
      [
        'has a rollback that is neither manual nor auto',
        '    health:\n      argocd: "{app}-dev"\n    rollback: always\n',
        {
          line: 7,
          col: 15,
          path: 'environments[0].rollback',
          message: 'rollback must be one of manual, auto, found the string "always"',
        },
      ],
    ])('reports that it %s, where', (_name, yaml, problem) => {
      const result = parseRepoConfig(base + yaml);
      expect(result.ok).toBe(false);
      expect(!result.ok && result.problems).toEqual([{ file: '.github/escalator.yml', ...problem }]);
    });
  });

  it('refuses an unbound status context in validate-config with the line and the entry to write', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'escalator-health-'));
    writeFileSync(
      join(dir, 'escalator.yml'),
      `${base}    health:\n      statuses:\n        - "kustomization/apps-dev/*"\n`,
    );
    let stderr = '';
    const code = await runCli(['validate-config', 'escalator.yml'], {
      stdout: () => undefined,
      stderr: (text) => (stderr += text),
      cwd: dir,
    });
    expect(code).toBe(2);
    expect(stderr).toBe(
      `escalator.yml:7:11: status context "kustomization/apps-dev/*" names no poster: anyone who can write to the repository could post it (${statusFix('kustomization/apps-dev/*')})\n`,
    );
  });

  it('is reported by validate-config as file:line:col', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'escalator-health-'));
    writeFileSync(
      join(dir, 'escalator.yml'),
      `${base}    health:\n      argocd: "{application}-dev"\n      tolerate: soon\n`,
    );
    let stderr = '';
    const code = await runCli(['validate-config', 'escalator.yml'], {
      stdout: () => undefined,
      stderr: (text) => (stderr += text),
      cwd: dir,
    });
    expect(code).toBe(2);
    expect(stderr).toBe(
      [
        `escalator.yml:6:15: "{application}-dev" is not an agent object name (${OBJECT_HINT})`,
        'escalator.yml:7:17: invalid duration "soon" (write a whole number and a unit: 30s, 10m, 2h, 1d, or combined like 1h30m)',
        '',
      ].join('\n'),
    );
  });
});
