import { randomUUID } from 'node:crypto';
import { SandboxClient, type Simulator, startSimulator } from '@escalator/github-sandbox';
import { Octokit } from '@octokit/rest';
import { Redis } from 'ioredis';
import { createLogger } from '../../src/observability/logger.js';
import { startEscalator, type RunningEscalator } from '../../src/main/server.js';

export const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** The whole product against the sandbox GitHub: simulator, Escalator web + workers, real Redis. */
export interface Stack {
  sim: Simulator;
  client: SandboxClient;
  app: RunningEscalator;
  prefix: string;
  registryToken: string;
  ciToken: string;
  /** Every request Escalator made to GitHub, in order. */
  calls: Array<{ route: string; status: number; durationMs: number; at: number }>;
  /** An Octokit acting as the sandbox user (reads what GitHub holds). */
  user: Octokit;
  close(): Promise<void>;
}

export async function startStack(env: Record<string, string> = {}): Promise<Stack> {
  const sim = await startSimulator();
  const prefix = `e2e-${randomUUID().slice(0, 8)}`;
  const registryToken = `registry-${randomUUID()}`;
  const ciToken = `ci-${randomUUID()}`;
  const calls: Stack['calls'] = [];
  const app = await startEscalator(
    {
      APP_ID: String(sim.app.id),
      PRIVATE_KEY: sim.app.privateKey,
      WEBHOOK_SECRET: sim.app.webhookSecret,
      GITHUB_API_URL: sim.apiUrl,
      REDIS_URL: redisUrl,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: process.env.E2E_LOG_LEVEL ?? 'silent',
      ESCALATOR_REGISTRY_TOKEN: registryToken,
      ESCALATOR_CI_TOKEN: ciToken,
      ESCALATOR_DEBOUNCE_MS: '200',
      ...env,
    },
    { prefix, log: createLogger({ level: process.env.E2E_LOG_LEVEL ?? 'silent' }), onGitHubRequest: (info) => calls.push({ route: info.route, status: info.status, durationMs: Math.round(info.durationMs), at: Date.now() }) },
  );
  sim.setWebhookUrl(`${app.url}/api/github/webhooks`);
  const client = new SandboxClient(sim.url, sim.user.token);
  const user = new Octokit({ baseUrl: sim.apiUrl, auth: sim.user.token, log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} } });
  return {
    sim,
    client,
    app,
    prefix,
    registryToken,
    ciToken,
    calls,
    user,
    async close() {
      await app.close();
      await sim.close();
      const redis = new Redis(redisUrl);
      const keys = await redis.keys(`${prefix}:*`);
      if (keys.length > 0) await redis.del(...keys);
      await redis.quit();
    },
  };
}

/** Poll until `check` returns a value (not undefined), or fail with what was last seen. */
export async function eventually<T>(check: () => Promise<T | undefined>, options: { timeoutMs?: number; what?: string } = {}): Promise<T> {
  const deadline = Date.now() + (options.timeoutMs ?? 45_000);
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${options.what ?? 'a condition'}${last ? `: ${(last as Error).message}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export async function postImage(stack: Stack, image: string): Promise<Response> {
  return fetch(`${stack.app.url}/api/v1/images`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${stack.ciToken}` }, body: JSON.stringify({ image }) });
}

export async function readFile(stack: Stack, owner: string, repo: string, path: string, ref: string): Promise<string> {
  const { data } = await stack.user.rest.repos.getContent({ owner, repo, path, ref });
  if (Array.isArray(data) || data.type !== 'file') throw new Error(`${path} is not a file`);
  return Buffer.from(data.content, 'base64').toString('utf8');
}

/** Wait until Escalator has indexed a repository (at a given commit, when `sha` is set). */
export async function waitIndexed(stack: Stack, owner: string, repo: string, sha?: string): Promise<void> {
  const redis = new Redis(redisUrl);
  try {
    await eventually(async () => {
      const text = await redis.get(`${stack.prefix}:index:repo:${owner}/${repo}`);
      if (!text) return undefined;
      return !sha || (JSON.parse(text) as { sha: string }).sha === sha ? true : undefined;
    }, { what: `${owner}/${repo} to be indexed${sha ? ` at ${sha.slice(0, 7)}` : ''}` });
  } finally {
    await redis.quit();
  }
}
