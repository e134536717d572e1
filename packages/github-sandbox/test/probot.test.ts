import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createNodeMiddleware, Probot, ProbotOctokit } from 'probot';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectGitHubShaped, startHarness, type Harness } from '../testing/harness.js';

/**
 * A real probot App, authenticated with the simulator's App key, receives the simulator's
 * signed webhooks and calls back through its own octokit — the same path the product takes.
 */
let h: Harness;
let server: Server;
const seen: { event: string; config?: string; error?: string }[] = [];
let notify: () => void = () => undefined;

beforeAll(async () => {
  h = await startHarness();
  const probot = new Probot({
    appId: h.sim.app.id,
    privateKey: h.sim.app.privateKey,
    secret: h.sim.app.webhookSecret,
    baseUrl: h.sim.apiUrl,
    logLevel: 'fatal',
  });
  const app = (bot: Probot) => {
    bot.on('push', async (context) => {
      try {
        const { data } = await context.octokit.rest.repos.getContent(
          context.repo({ path: '.github/escalator.yml', ref: context.payload.after }),
        );
        const text =
          !Array.isArray(data) && data.type === 'file' ? Buffer.from(data.content, 'base64').toString('utf8') : '';
        seen.push({ event: 'push', config: text });
      } catch (error) {
        seen.push({ event: 'push', error: String(error) });
      }
      notify();
    });
  };
  const middleware = await createNodeMiddleware(app, { probot, webhooksPath: '/api/github/webhooks' });
  server = createServer((req, res) => {
    void middleware(req, res, () => res.writeHead(404).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  h.sim.setWebhookUrl(`http://127.0.0.1:${(server.address() as AddressInfo).port}/api/github/webhooks`);
  await h.seedRepo('gitops', { '.github/escalator.yml': 'environments: []\n' });
});

afterAll(async () => {
  expectGitHubShaped(h);
  await new Promise<void>((resolve) => server.close(() => resolve()));
  await h.close();
});

describe('a probot App against the simulator', () => {
  it('verifies a signed push webhook and reads the pushed file with its installation token', async () => {
    const handled = new Promise<void>((resolve) => {
      notify = resolve;
    });
    await h.client.commit('example/gitops', {
      branch: 'main',
      files: { '.github/escalator.yml': 'environments:\n  - name: dev\n' },
    });
    await handled;
    expect(seen).toEqual([{ event: 'push', config: 'environments:\n  - name: dev\n' }]);
    const [delivery] = await h.client.deliveries({ event: 'push' });
    expect(delivery).toMatchObject({ status: 'OK', status_code: 200 });
  });

  it("backs off on a secondary rate limit with probot's throttling and then succeeds", async () => {
    const octokit = new ProbotOctokit({
      baseUrl: h.sim.apiUrl,
      auth: { appId: h.sim.app.id, privateKey: h.sim.app.privateKey },
      throttle: {
        enabled: true,
        onRateLimit: () => true,
        onSecondaryRateLimit: (_retryAfter: number, _options: unknown, _octokit: unknown, retryCount: number) =>
          retryCount < 2,
      },
    });
    await h.client.setRateLimit({ mode: 'secondary', count: 1, retryAfter: 1 });
    const started = Date.now();
    const { data } = await octokit.rest.apps.getAuthenticated();
    expect(data?.slug).toBe('escalator');
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });
});
