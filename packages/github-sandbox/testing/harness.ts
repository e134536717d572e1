import { createSign } from 'node:crypto';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Octokit } from '@octokit/rest';
import { expect } from 'vitest';
import { SandboxClient } from '../src/client.js';
import { startSimulator, type Simulator, type SimulatorOptions } from '../src/server.js';
import { OpenApiRecorder } from './openapi.js';
import { WebhookRecorder } from './webhook-schemas.js';

/** A webhook the receiver got, raw body included (for signature checks). */
export interface ReceivedWebhook {
  headers: IncomingHttpHeaders;
  body: string;
  payload: Record<string, unknown>;
}

/** The simulator with OpenAPI and webhook-schema recorders attached, and a webhook receiver. */
export interface Harness {
  sim: Simulator;
  client: SandboxClient;
  openapi: OpenApiRecorder;
  webhooks: WebhookRecorder;
  received: ReceivedWebhook[];
  /** An `@octokit/rest` client authenticated as the App (JWT). */
  appOctokit(): Octokit;
  /** An `@octokit/rest` client with a fresh installation access token. */
  installationOctokit(installationId: number): Promise<Octokit>;
  /** An `@octokit/rest` client acting as the control API user. */
  userOctokit(token?: string): Octokit;
  /** Creates a repository owned by `example` with the App installed. */
  seedRepo(
    name: string,
    files: Record<string, string>,
  ): Promise<{ owner: string; repo: string; installationId: number }>;
  close(): Promise<void>;
}

/** Octokit logs every 4xx; the tests provoke many on purpose. */
const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** Signs an App JWT the way @octokit/auth-app does (iat 30 s in the past, 10 minutes long). */
export function signAppJwt(
  appId: number,
  privateKey: string,
  now = Date.now(),
  claims: Record<string, unknown> = {},
): string {
  const iat = Math.floor(now / 1000) - 30;
  const encode = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');
  const body = `${encode({ alg: 'RS256', typ: 'JWT' })}.${encode({ iat, exp: iat + 600, iss: appId, ...claims })}`;
  const signature = createSign('RSA-SHA256').update(body).sign(privateKey).toString('base64url');
  return `${body}.${signature}`;
}

export async function startHarness(options: SimulatorOptions = {}): Promise<Harness> {
  const received: ReceivedWebhook[] = [];
  const receiver = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      received.push({ headers: req.headers, body, payload: JSON.parse(body) as Record<string, unknown> });
      res.writeHead(202, { 'content-type': 'text/plain' }).end('Accepted');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/api/github/webhooks`;
  const sim = await startSimulator({ ...options, app: { webhookUrl: hookUrl, ...options.app } });
  const openapi = new OpenApiRecorder();
  const webhooks = new WebhookRecorder();
  sim.onExchange((exchange) => openapi.check(exchange));
  sim.context.webhooks.onDelivery((delivery) => webhooks.check(delivery));
  const client = new SandboxClient(sim.url, sim.user.token);
  const appOctokit = () =>
    new Octokit({ baseUrl: sim.apiUrl, auth: signAppJwt(sim.app.id, sim.app.privateKey), log: quiet });
  return {
    sim,
    client,
    openapi,
    webhooks,
    received,
    appOctokit,
    async installationOctokit(installationId) {
      const { data } = await appOctokit().rest.apps.createInstallationAccessToken({ installation_id: installationId });
      return new Octokit({ baseUrl: sim.apiUrl, auth: data.token, log: quiet });
    },
    userOctokit(token = sim.user.token) {
      return new Octokit({ baseUrl: sim.apiUrl, auth: token, log: quiet });
    },
    async seedRepo(name, files) {
      const created = await client.createRepo({ owner: 'example', name, files, teams: ['release-managers'] });
      return { owner: 'example', repo: name, installationId: created.installation_id ?? 0 };
    },
    async close() {
      await sim.close();
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    },
  };
}

/** Fails the test when any exchange or webhook strayed from GitHub's descriptions. */
export function expectGitHubShaped(harness: Harness): void {
  expect(harness.openapi.failures).toEqual([]);
  expect(harness.webhooks.failures).toEqual([]);
  expect(harness.sim.context.webhooks.errors).toEqual([]);
}
