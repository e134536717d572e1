import { generateKeyPairSync, randomUUID } from 'node:crypto';
import { SandboxClient, type Simulator, startSimulator } from '@escalator/github-sandbox';
import { Octokit } from '@octokit/rest';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitHubClients } from '../../src/adapters/github/client.js';
import { createLogger } from '../../src/observability/logger.js';
import { startEscalator, type RunningEscalator } from '../../src/main/server.js';
import { redisUrl } from '../support/redis.js';

const { privateKey } = generateKeyPairSync('rsa', {
  modulusLength: 2048,
  privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
  publicKeyEncoding: { type: 'spki', format: 'pem' },
});
const log = createLogger({ level: 'silent' });

/** Every series of the metrics whose labels name routes, as `name{labels}` (values dropped). */
function routeSeries(text: string): string[] {
  return text
    .split('\n')
    .filter((line) => /^escalator_((github|http)_requests|agent_reports)_total\{/.test(line))
    .map((line) => line.replace(/ [^ ]+$/, ''));
}

/**
 * `/metrics` label values are bounded: route templates, never the owners, repositories, pull
 * request numbers or path tokens of the requests (each distinct value would be a new series).
 * Requests to GitHub (sandbox) and to Escalator's own HTTP server, with values never seen before,
 * must add no series.
 */
describe('/metrics route labels (real server, sandbox GitHub)', () => {
  const registryToken = `registry-${randomUUID()}`;
  let sim: Simulator;
  let app: RunningEscalator;
  let github: GitHubClients;
  let user: Octokit;
  const owner = `owner${randomUUID().slice(0, 6)}`;
  const repos: Array<{ repo: string; installationId: number; number: number }> = [];
  const secrets: string[] = [owner, registryToken];

  beforeAll(async () => {
    sim = await startSimulator();
    const client = new SandboxClient(sim.url, sim.user.token);
    user = new Octokit({
      baseUrl: sim.apiUrl,
      auth: sim.user.token,
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    });
    for (let i = 0; i < 2; i++) {
      const repo = `private-repo-${randomUUID().slice(0, 6)}`;
      secrets.push(repo);
      const created = await client.createRepo({ owner, name: repo, files: { 'README.md': 'hi\n' } });
      await client.commit(`${owner}/${repo}`, { branch: 'topic', from: 'main', files: { 'NOTES.md': 'notes\n' } });
      const pull = await client.openPull(`${owner}/${repo}`, { title: 'topic', head: 'topic' });
      // Three comments, read one per page: page 2 and 3 come from `link` headers GitHub builds.
      for (let c = 0; c < 3; c++)
        await user.rest.issues.createComment({ owner, repo, issue_number: pull.number, body: `comment ${c}` });
      repos.push({ repo, installationId: created.installation_id as number, number: pull.number });
    }
    github = new GitHubClients({ appId: sim.app.id, privateKey: sim.app.privateKey, baseUrl: sim.apiUrl, log });
    app = await startEscalator(
      {
        APP_ID: '123',
        PRIVATE_KEY: privateKey,
        WEBHOOK_SECRET: 'test-secret',
        PORT: '0',
        HOST: '127.0.0.1',
        REDIS_URL: redisUrl,
        LOG_LEVEL: 'silent',
        ESCALATOR_ROLE: 'web',
        ESCALATOR_REGISTRY_TOKEN: registryToken,
        ESCALATOR_ADMIN_TOKEN: `admin-${randomUUID()}`,
        ESCALATOR_AGENT_TOKEN: `agent-${randomUUID()}`,
      },
      { log, prefix: `leaks-${randomUUID().slice(0, 8)}` },
    );
  }, 60_000);
  afterAll(async () => {
    await app?.close();
    await sim?.close();
  });

  /** GitHub calls and inbound requests, each carrying values no earlier round used. */
  async function round(n: number): Promise<void> {
    for (const { repo, installationId, number } of repos) {
      const octokit = github.forInstallation(installationId);
      await octokit.paginate(octokit.rest.issues.listComments, { owner, repo, issue_number: number, per_page: 1 });
      await octokit.rest.pulls.get({ owner, repo, pull_number: number });
      await octokit.request(`GET /repos/${owner}/${repo}/pulls/${number}`);
      await octokit.request(`GET /repos/${owner}/${repo}/issues/${1000 + n}`).catch(() => undefined);
      await octokit
        .request(`GET /repos/${owner}/${repo}/contents/${encodeURIComponent(`file-${n}.txt`)}?ref=topic`)
        .catch(() => undefined);
    }
    const paths = [
      `/registry/dockerhub/${registryToken}`,
      `/registry/quay/${registryToken}-${n}`,
      `/registry/harbor?n=${n}`,
      `/registry/nosuchsource${n}`,
      `/repos/${owner}/${repos[0]!.repo}/pulls/${n}`,
      `/admin/queues/api/queues?page=${n}`,
      `/admin/relay/deliveries?n=${n}`,
      `/metrics?n=${n}`,
      `/healthz?n=${n}`,
      `/api/v1/images?n=${n}`,
      `/api/github/webhooks?n=${n}`,
      `/x${n}/${owner}`,
      `/agents/flux/${owner}/${repos[0]!.repo}`,
      `/agents/argocd/${owner}/repo-${n}`,
      `/agents/agent${n}?n=${n}`,
    ];
    for (const path of paths) {
      for (const method of ['GET', 'POST', `M${n}`]) {
        await fetch(`${app.url}${path}`, {
          method,
          ...(method === 'POST' ? { body: '{}', headers: { 'content-type': 'application/json' } } : {}),
        })
          .then((res) => res.arrayBuffer())
          .catch(() => undefined);
      }
    }
  }

  const scrape = async (): Promise<string> => (await fetch(`${app.url}/metrics`)).text();

  it(
    'adds no series for owners, repositories, numbers or tokens it has not seen before',
    { timeout: 60_000 },
    async () => {
      await round(1);
      const first = routeSeries(await scrape());
      // Both metrics exist: the GitHub calls and the inbound requests were counted.
      expect(first.some((line) => line.startsWith('escalator_github_requests_total{'))).toBe(true);
      expect(first.some((line) => line.startsWith('escalator_http_requests_total{'))).toBe(true);
      for (let n = 2; n <= 4; n++) await round(n);
      const text = await scrape();
      expect(routeSeries(text).sort()).toEqual(first.sort());
      for (const secret of secrets) expect(text).not.toContain(secret);
      for (const { number } of repos) expect(routeSeries(text).join('\n')).not.toMatch(new RegExp(`/${number}\\b`));
      expect(routeSeries(text).join('\n')).not.toMatch(/api\/v3|https?:|\?|\/1\d{3}\b|file-/);
    },
  );

  it('labels with route templates', async () => {
    const series = routeSeries(await scrape());
    expect(series).toContain(
      'escalator_github_requests_total{route="GET /repos/{owner}/{repo}/issues/{issue_number}/comments",status="200"}',
    );
    expect(series).toContain(
      'escalator_github_requests_total{route="GET /repos/{owner}/{repo}/pulls/{pull_number}",status="200"}',
    );
    expect(series).toContain('escalator_http_requests_total{route="/registry/:source",method="POST",status="401"}');
    expect(series).toContain('escalator_http_requests_total{route="/admin/*",method="GET",status="401"}');
    expect(series).toContain('escalator_http_requests_total{route="other",method="GET",status="404"}');
    expect(
      series.filter((line) => line.includes('method=')).every((line) => /method="(GET|POST|other)"/.test(line)),
    ).toBe(true);
  });
});
