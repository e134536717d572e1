import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { parseRepoConfig } from '../../src/config/repo-config.js';
import {
  ARGOCD_TEMPLATE_FILE,
  commitOf,
  normalizeArgoCdBody,
  normalizeCheckRunEvent,
  normalizeDeploymentStatusEvent,
  normalizeFluxEvent,
  normalizeStatusEvent,
  reportTime,
  type AgentReport,
  type Poster,
} from '../../src/events/agents/index.js';
import { githubRepoOf, mapAgentReport } from '../../src/events/agents/health-map.js';

const root = join(import.meta.dirname, '../..');
const fixture = (name: string): unknown =>
  JSON.parse(readFileSync(join(root, 'test/fixtures/agents', name), 'utf8')) as unknown;
const SHA = '4f9a2c1e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39';

/** GitHub's webhook payloads as recorded in @octokit/webhooks-examples. */
const examples = JSON.parse(
  readFileSync(createRequire(import.meta.url).resolve('@octokit/webhooks-examples'), 'utf8'),
) as Array<{ name: string; examples: Array<Record<string, unknown>> }>;
const example = (name: string, index = 0): Record<string, unknown> =>
  structuredClone(examples.find((entry) => entry.name === name)!.examples[index]!);

describe('normalizeFluxEvent (test/fixtures/agents, see its README)', () => {
  it('reads a Ready Kustomization as synced and healthy at the main@sha1 revision', () => {
    expect(normalizeFluxEvent(fixture('flux-kustomization-succeeded.json'))).toEqual({
      kind: 'report',
      report: {
        agent: 'flux',
        object: { kind: 'Kustomization', namespace: 'flux-system', name: 'apps-staging' },
        revision: SHA,
        sync: 'synced',
        health: 'healthy',
        at: '2026-11-20T10:00:00.000Z',
        message: 'Reconciliation finished in 2.418s, next run in 10m0s',
      },
    });
  });

  it('reads HealthCheckFailed as synced and degraded', () => {
    const result = normalizeFluxEvent(fixture('flux-kustomization-health-failed.json'));
    expect(result).toMatchObject({ kind: 'report', report: { revision: SHA, sync: 'synced', health: 'degraded' } });
  });

  it('reads the documented example: group-prefixed metadata, main/<sha> revision, ValidationFailed as a failed sync', () => {
    expect(normalizeFluxEvent(fixture('flux-validation-failed-legacy.json'))).toMatchObject({
      kind: 'report',
      report: {
        object: { kind: 'Kustomization', namespace: 'apps', name: 'webapp' },
        revision: '731f7eaddfb6af01cb2173e18f0f75b0ba780ef1',
        sync: 'failed',
        at: '2022-10-28T07:26:19.000Z',
      },
    });
  });

  it('finds no commit in a HelmRelease event (its revision is the chart version)', () => {
    const result = normalizeFluxEvent(fixture('flux-helmrelease-upgraded.json'));
    expect(result).toMatchObject({ kind: 'report', report: { sync: 'synced', health: 'healthy' } });
    expect(result.kind === 'report' && result.report.revision).toBeUndefined();
  });

  it('prefers originRevision (the commit an OCI artifact was built from)', () => {
    const event = fixture('flux-kustomization-succeeded.json') as { metadata: Record<string, string> };
    event.metadata = { revision: 'latest@sha256:' + 'e'.repeat(64), originRevision: `main@sha1:${'b'.repeat(40)}` };
    expect(normalizeFluxEvent(event)).toMatchObject({ report: { revision: 'b'.repeat(40) } });
  });

  it('says which field is missing from a body that is not a Flux event', () => {
    expect(normalizeFluxEvent({ severity: 'info' })).toEqual({
      kind: 'invalid',
      message: expect.stringMatching(/^the body is not a Flux event: involvedObject: /) as string,
    });
  });
});

describe('normalizeArgoCdBody (the template of deploy/agents/argocd-notifications-cm.yaml, filled in by hand)', () => {
  const template = (() => {
    const cm = parseYaml(readFileSync(join(root, ARGOCD_TEMPLATE_FILE), 'utf8')) as { data: Record<string, string> };
    const spec = parseYaml(cm.data['template.escalator-app-sync-health']!) as {
      webhook: { escalator: { body: string } };
    };
    return spec.webhook.escalator.body;
  })();

  it('has fixtures with exactly the fields the shipped template renders', () => {
    // Every `{{ … }}` of a line is one JSON value: replaced by null, the template is a JSON object.
    const rendered = JSON.parse(template.replace(/\{\{.*\}\}/g, 'null')) as Record<string, unknown>;
    for (const name of ['argocd-deployed.json', 'argocd-health-degraded.json', 'argocd-sync-failed.json'])
      expect(Object.keys(fixture(name) as object).sort(), name).toEqual(Object.keys(rendered).sort());
  });

  it('reads a deployed Application as synced and healthy, from the later of health change and sync end', () => {
    expect(normalizeArgoCdBody(fixture('argocd-deployed.json'))).toEqual({
      kind: 'report',
      report: {
        agent: 'argocd',
        object: { name: 'hello-staging', namespace: 'argocd' },
        revision: SHA,
        sync: 'synced',
        health: 'healthy',
        at: '2026-11-20T10:00:42.000Z',
        url: 'https://argocd.example.com/applications/hello-staging',
        message: 'successfully synced (all tasks run)',
        repoURL: 'https://github.com/example/gitops.git',
      },
    });
  });

  it('reads Degraded as degraded since the health changed', () => {
    expect(normalizeArgoCdBody(fixture('argocd-health-degraded.json'))).toMatchObject({
      report: { health: 'degraded', sync: 'synced', at: '2026-11-20T10:20:13.000Z' },
    });
  });

  it('reads a failed operation as a failed sync with its message', () => {
    expect(normalizeArgoCdBody(fixture('argocd-sync-failed.json'))).toMatchObject({
      report: {
        sync: 'failed',
        revision: '9b8a7c6d5e4f3a2b1c0d9e8f7a6b5c4d3e2f1a0b',
        at: '2026-11-20T11:00:09.000Z',
        message: expect.stringContaining('failed to apply') as string,
      },
    });
  });

  it('treats the null of an absent field and a Go template <no value> as absent', () => {
    const body = { ...(fixture('argocd-deployed.json') as object), operationPhase: null, repoURL: '<no value>' };
    const result = normalizeArgoCdBody(body);
    expect(result.kind === 'report' && result.report.repoURL).toBeUndefined();
  });

  it('refuses a body without the template format, naming the template file', () => {
    expect(normalizeArgoCdBody({ app: 'hello' })).toEqual({
      kind: 'invalid',
      message: expect.stringContaining(ARGOCD_TEMPLATE_FILE) as string,
    });
  });

  it('refuses a body of the template format with a field missing, naming the field', () => {
    const body = { ...(fixture('argocd-deployed.json') as object), healthStatus: undefined };
    expect(normalizeArgoCdBody(body)).toEqual({
      kind: 'invalid',
      message: expect.stringContaining('healthStatus') as string,
    });
  });

  it('refuses a status Argo CD does not have', () => {
    const body = { ...(fixture('argocd-deployed.json') as object), healthStatus: 'Fine' };
    expect(normalizeArgoCdBody(body)).toMatchObject({ kind: 'invalid' });
  });
});

describe('GitHub events (payloads of @octokit/webhooks-examples)', () => {
  it('reads a Flux github-provider commit status as a report about its context', () => {
    const payload = {
      ...example('status'),
      sha: SHA,
      context: 'kustomization/apps-staging/2f1e4c3b',
      state: 'failure',
    };
    expect(normalizeStatusEvent(payload as never)).toEqual({
      kind: 'report',
      report: {
        agent: 'status',
        object: { name: 'kustomization/apps-staging/2f1e4c3b' },
        revision: SHA,
        sync: 'synced',
        health: 'degraded',
        at: '2019-05-15T15:20:55.000Z',
        poster: { kind: 'user', login: 'Codertocat' },
      },
    });
  });

  it("names an App's commit status by the slug of its bot account", () => {
    const payload = { ...example('status'), sender: { login: 'argocd-notifications[bot]', type: 'Bot', id: 9 } };
    expect(normalizeStatusEvent(payload as never)).toMatchObject({
      report: { poster: { kind: 'app', slug: 'argocd-notifications' } },
    });
  });

  /** The example's run is on a pull request's branch; as an agent's run on the default branch's head: */
  const onDefaultBranch = () => {
    const payload = example('check_run', 1) as {
      check_run: Record<string, unknown> & { check_suite: Record<string, unknown> };
    };
    payload.check_run.pull_requests = [];
    payload.check_run.check_suite.head_branch = 'master';
    return payload;
  };

  it('reads a completed check run by its conclusion, posted by its App', () => {
    const payload = onDefaultBranch();
    expect(normalizeCheckRunEvent(payload as never)).toMatchObject({
      report: {
        object: { name: 'Octocoders-linter' },
        health: 'degraded',
        url: 'https://octocoders.io',
        poster: { kind: 'app', id: 29310, slug: 'github-actions' },
      },
    });
    payload.check_run.conclusion = 'neutral';
    expect(normalizeCheckRunEvent(payload as never)).toMatchObject({ kind: 'ignored' });
  });

  it('ignores a check run attached to a pull request, or on another branch than the default one', () => {
    expect(normalizeCheckRunEvent(example('check_run', 1) as never)).toEqual({
      kind: 'ignored',
      reason: 'the check run belongs to a pull request, not to the default branch',
    });
    const other = onDefaultBranch();
    other.check_run.check_suite.head_branch = 'changes';
    expect(normalizeCheckRunEvent(other as never)).toEqual({
      kind: 'ignored',
      reason: 'the check run is on branch "changes", not the default branch',
    });
  });

  it('reads a deployment status as a report about its environment, with who created the Deployment', () => {
    expect(normalizeDeploymentStatusEvent(example('deployment_status') as never)).toMatchObject({
      report: {
        object: { name: 'production' },
        revision: 'f95f852bd8fca8fcc58a9a2d6c842781e32a215e',
        sync: 'synced',
        health: 'healthy',
        poster: { kind: 'user', login: 'Codertocat' },
        deployment: { byEscalator: false, creator: { kind: 'user', login: 'Codertocat' } },
      },
    });
  });

  it("knows Escalator's own Deployments, and never reads its own deployment statuses", () => {
    const escalator = { id: 42, slug: 'escalator' };
    const agent = { id: 7, slug: 'argocd-notifications' };
    const payload = example('deployment_status') as {
      deployment: Record<string, unknown>;
      deployment_status: Record<string, unknown>;
    };
    payload.deployment.performed_via_github_app = escalator;
    payload.deployment_status.performed_via_github_app = agent;
    expect(normalizeDeploymentStatusEvent(payload as never, 42)).toMatchObject({
      report: { poster: { kind: 'app', id: 7 }, deployment: { byEscalator: true } },
    });
    payload.deployment_status.performed_via_github_app = escalator;
    expect(normalizeDeploymentStatusEvent(payload as never, 42)).toMatchObject({ kind: 'ignored' });
  });
});

describe('commitOf', () => {
  it.each([
    [`main@sha1:${'A'.repeat(40)}`, 'a'.repeat(40)],
    [`sha1:${'a'.repeat(40)}`, 'a'.repeat(40)],
    [`main/${'a'.repeat(40)}`, 'a'.repeat(40)],
    ['a'.repeat(40), 'a'.repeat(40)],
    [`latest@sha256:${'a'.repeat(64)}`, undefined],
    ['1.4.2', undefined],
  ])('reads %s', (revision, commit) => {
    expect(commitOf(revision)).toBe(commit);
  });
});

describe('mapAgentReport', () => {
  const config = parseRepoConfig(`
environments:
  - name: dev
    paths: ["apps/*/overlays/dev"]
    from: registry
    health: { argocd: "argocd/{app}-dev" }
  - name: staging
    paths: ["apps/*/overlays/staging"]
    from: dev
    health: { flux: "flux-system/apps-staging" }
  - name: prod
    paths: ["apps/*/overlays/prod"]
    from: staging
    health:
      statuses:
        - { context: "kustomization/{app}-prod/*", user: flux-bot }
        - { context: "prod-cluster", app: argocd-notifications }
        - { context: "prod-{app}", app: 7 }
`);
  if (!config.ok) throw new Error(JSON.stringify(config.problems));
  const files = ['dev', 'staging', 'prod'].flatMap((environment) =>
    ['hello', 'world'].map((app) => ({ environment, app })),
  );
  const index = { config: config.config, files };
  const report = (agent: AgentReport['agent'], name: string, namespace?: string): AgentReport => ({
    agent,
    object: { name, ...(namespace ? { namespace } : {}) },
    revision: SHA,
    sync: 'synced',
    health: 'healthy',
  });

  it('binds {app} to the app whose name fits, in the namespace the pattern names', () => {
    expect(mapAgentReport(index, report('argocd', 'hello-dev', 'argocd'))).toEqual([
      { environment: 'dev', app: 'hello' },
    ]);
    expect(mapAgentReport(index, report('argocd', 'hello-dev', 'other'))).toEqual([]);
  });

  it('takes one Kustomization for the whole environment: every app of it', () => {
    expect(mapAgentReport(index, report('flux', 'apps-staging', 'flux-system'))).toEqual([
      { environment: 'staging', app: 'hello' },
      { environment: 'staging', app: 'world' },
    ]);
  });

  const posted = (name: string, poster: Poster, deployment?: AgentReport['deployment']): AgentReport => ({
    ...report('status', name),
    poster,
    ...(deployment ? { deployment } : {}),
  });
  const fluxBot: Poster = { kind: 'user', login: 'Flux-Bot' };
  const argo: Poster = { kind: 'app', id: 7, slug: 'argocd-notifications' };

  it('matches status contexts with * for the provider uid, from the bound user (logins in any case)', () => {
    expect(mapAgentReport(index, posted('kustomization/world-prod/2f1e4c3b', fluxBot))).toEqual([
      { environment: 'prod', app: 'world' },
    ]);
  });

  it('hears a matching context from anyone else as nothing', () => {
    const name = 'kustomization/world-prod/2f1e4c3b';
    expect(mapAgentReport(index, report('status', name))).toEqual([]);
    expect(mapAgentReport(index, posted(name, { kind: 'user', login: 'mallory' }))).toEqual([]);
    expect(mapAgentReport(index, posted(name, { kind: 'app', slug: 'flux-bot' }))).toEqual([]);
    expect(mapAgentReport(index, posted('prod-cluster', { kind: 'user', login: 'argocd-notifications' }))).toEqual([]);
    expect(mapAgentReport(index, posted('prod-cluster', { kind: 'app', id: 15368, slug: 'github-actions' }))).toEqual(
      [],
    );
  });

  it('matches an App by its slug or its id; a commit status (slug only) cannot meet an id binding', () => {
    const all = [
      { environment: 'prod', app: 'hello' },
      { environment: 'prod', app: 'world' },
    ];
    expect(mapAgentReport(index, posted('prod-cluster', argo))).toEqual(all);
    expect(mapAgentReport(index, posted('prod-cluster', { kind: 'app', slug: 'ArgoCD-Notifications' }))).toEqual(all);
    expect(mapAgentReport(index, posted('prod-hello', argo))).toEqual([{ environment: 'prod', app: 'hello' }]);
    expect(mapAgentReport(index, posted('prod-hello', { kind: 'app', slug: 'argocd-notifications' }))).toEqual([]);
  });

  it('takes a deployment status only on a Deployment Escalator or the bound poster created', () => {
    const all = [
      { environment: 'prod', app: 'hello' },
      { environment: 'prod', app: 'world' },
    ];
    expect(mapAgentReport(index, posted('prod-cluster', argo, { byEscalator: false, creator: argo }))).toEqual(all);
    expect(mapAgentReport(index, posted('prod-cluster', argo, { byEscalator: true, creator: undefined }))).toEqual(all);
    const writers = { byEscalator: false, creator: { kind: 'user', login: 'mallory' } } as const;
    expect(mapAgentReport(index, posted('prod-cluster', argo, writers))).toEqual([]);
  });

  it('maps an object nobody configured to nothing', () => {
    expect(mapAgentReport(index, report('flux', 'apps-prod', 'flux-system'))).toEqual([]);
    expect(mapAgentReport(index, report('argocd', 'unknown-dev', 'argocd'))).toEqual([]);
  });
});

describe('githubRepoOf', () => {
  it.each([
    ['https://github.com/example/gitops.git', { owner: 'example', repo: 'gitops' }],
    ['https://github.com/example/gitops', { owner: 'example', repo: 'gitops' }],
    ['git@github.com:example/gitops.git', { owner: 'example', repo: 'gitops' }],
    ['ssh://git@github.com/example/gitops', { owner: 'example', repo: 'gitops' }],
    ['https://gitlab.com/example/gitops.git', undefined],
    ['https://charts.example.com/stable', undefined],
  ])('reads %s', (url, expected) => {
    expect(githubRepoOf(url)).toEqual(expected);
  });
});

describe('reportTime', () => {
  it('keeps the agent time, never later than when the report was received', () => {
    expect(reportTime('2026-11-20T10:00:00.000Z', '2026-11-20T10:00:01.000Z')).toBe('2026-11-20T10:00:00.000Z');
    expect(reportTime('2026-11-20T12:00:00.000Z', '2026-11-20T10:00:01.000Z')).toBe('2026-11-20T10:00:01.000Z');
    expect(reportTime(undefined, '2026-11-20T10:00:01.000Z')).toBe('2026-11-20T10:00:01.000Z');
  });
});

describe('normalizeArgoCdBody with a multi-source Application', () => {
  it('takes the commit and repository of its Git source, not the chart version', () => {
    const body = {
      ...(JSON.parse(readFileSync(join(root, 'test/fixtures/agents/argocd-deployed.json'), 'utf8')) as object),
      revision: null,
      repoURL: null,
      sources: ['https://charts.example.com/stable', 'https://github.com/example/gitops.git'],
      revisions: ['1.4.2', SHA],
    };
    expect(normalizeArgoCdBody(body)).toMatchObject({
      report: { revision: SHA, repoURL: 'https://github.com/example/gitops.git' },
    });
  });
});
