import type { SandboxApp, SandboxCheckRun, SandboxPull, SandboxRepo } from '../model.js';
import { isoTime, nodeId, type Urls } from '../urls.js';
import { appShape } from './users.js';

/** `check-run`, valid for REST and (once completed) for the `check_run` webhook. */
export function checkRunShape(
  urls: Urls,
  repo: SandboxRepo,
  app: SandboxApp,
  run: SandboxCheckRun,
  pulls: SandboxPull[],
  target: 'rest' | 'webhook' = 'rest',
): Record<string, unknown> {
  const full = `${repo.owner.login}/${repo.name}`;
  const url = urls.repoApi(full, `/check-runs/${run.id}`);
  const minimal = (pull: SandboxPull) => ({
    url: urls.repoApi(full, `/pulls/${pull.number}`),
    id: pull.id,
    number: pull.number,
    head: { ref: pull.headRef, sha: pull.headSha, repo: { id: repo.id, url: urls.repoApi(full), name: repo.name } },
    base: { ref: pull.baseRef, sha: run.headSha, repo: { id: repo.id, url: urls.repoApi(full), name: repo.name } },
  });
  const suite: Record<string, unknown> = { id: run.suiteId };
  if (target === 'webhook') {
    const head = pulls[0];
    Object.assign(suite, {
      node_id: nodeId('CheckSuite', run.suiteId),
      head_branch: head?.headRef ?? null,
      head_sha: run.headSha,
      status: 'completed',
      conclusion: run.conclusion ?? 'neutral',
      url: urls.repoApi(full, `/check-suites/${run.suiteId}`),
      before: null,
      after: run.headSha,
      pull_requests: pulls.map(minimal),
      app: appShape(urls, app, 'webhook'),
      created_at: isoTime(run.startedAt ?? new Date(0)),
      updated_at: isoTime(run.completedAt ?? run.startedAt ?? new Date(0)),
    });
  }
  return {
    id: run.id,
    node_id: nodeId('CheckRun', run.id),
    head_sha: run.headSha,
    external_id: run.externalId ?? '',
    url,
    html_url: urls.repoHtml(full, `/runs/${run.id}`),
    details_url: run.detailsUrl ?? urls.repoHtml(full, `/runs/${run.id}`),
    status: run.status,
    conclusion: run.conclusion,
    started_at: run.startedAt ? isoTime(run.startedAt) : null,
    completed_at: run.completedAt ? isoTime(run.completedAt) : null,
    output: {
      title: run.output.title,
      summary: run.output.summary,
      text: run.output.text,
      annotations_count: 0,
      annotations_url: `${url}/annotations`,
    },
    name: run.name,
    check_suite: suite,
    app: appShape(urls, app, target),
    pull_requests: pulls.map(minimal),
  };
}
