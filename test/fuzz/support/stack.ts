import { createHash, createHmac, generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { registries, type RegistryAuth } from '../../../src/events/index.js';
import { startEscalator, type RunningEscalator } from '../../../src/main/server.js';
import { createLogger, type Logger } from '../../../src/observability/logger.js';
import { queueNames } from '../../../src/jobs/kinds.js';
import { redisUrl } from '../../support/redis.js';

export { redisUrl };

/** The secrets the fuzzed web role runs with; a case "authenticates" when it uses them. */
export interface Secrets {
  webhookSecret: string;
  /** PRIVATE_KEY: the GitHub App's key (PEM). */
  privateKey: string;
  /** The relay target's secret (FUZZ_RELAY_SECRET). */
  relaySecret: string;
  registryToken: string;
  ciToken: string;
  adminToken: string;
  /** ESCALATOR_AGENT_TOKEN: the Flux HMAC key and the Argo CD bearer token. */
  agentToken: string;
  garAudience: string;
  garServiceAccount: string;
  maxBodyBytes: number;
  /** Scoped tokens (ESCALATOR_INTAKE_TOKENS) and GitHub Actions OIDC instead of the legacy global tokens. */
  scoped: boolean;
  /** The path token of a `path-token` registry (Docker Hub, Quay): the registry token when legacy, a secret of its own when scoped. */
  pathToken(source: string): string;
  /** A valid GitHub Actions OIDC token for the CI API (scoped stacks only). */
  ciOidcToken(claims?: Record<string, unknown>): string;
  /** A valid Google OIDC token for the Pub/Sub push route (signed by the test JWKS). */
  garToken(claims?: Record<string, unknown>): string;
}

export interface FuzzStack {
  url: string;
  prefix: string;
  secrets: Secrets;
  app: RunningEscalator;
  /** Jobs in every queue under the prefix, whatever their state. */
  jobCount(): Promise<number>;
  /** Keys under the prefix (queues, events streams, index, relay log). */
  keyCount(): Promise<number>;
  close(): Promise<void>;
}

/**
 * Escalator's web role exactly as production starts it (`startEscalator`, role `web`), with every
 * route switched on: registry routes, the CI API, Pub/Sub OIDC with a local JWKS, the relay with
 * one target (so verified pushes are relayed) and its admin delivery log. Real Redis, random prefix.
 */
export async function startFuzzStack(
  options: {
    redisUrl?: string;
    prefix?: string;
    env?: Record<string, string>;
    scoped?: boolean;
    /** The logger the web role writes to (default: silent); the fuzz captures it to look for secrets. */
    log?: Logger;
  } = {},
): Promise<FuzzStack> {
  const prefix = options.prefix ?? `fuzz-${randomUUID().slice(0, 8)}`;
  const dir = mkdtempSync(join(tmpdir(), 'escalator-fuzz-'));
  const google = generateKeyPairSync('rsa', { modulusLength: 2048 });
  writeFileSync(
    join(dir, 'jwks.json'),
    JSON.stringify({ keys: [{ ...google.publicKey.export({ format: 'jwk' }), kid: 'k1', alg: 'RS256', use: 'sig' }] }),
  );
  const { privateKey } = generateKeyPairSync('rsa', {
    modulusLength: 2048,
    privateKeyEncoding: { type: 'pkcs1', format: 'pem' },
    publicKeyEncoding: { type: 'spki', format: 'pem' },
  });
  const secrets: Secrets = {
    webhookSecret: `webhook-${randomUUID()}`,
    privateKey,
    relaySecret: `relay-${randomUUID()}`,
    registryToken: `registry-${randomUUID()}`,
    ciToken: `ci-${randomUUID()}`,
    adminToken: `admin-${randomUUID()}`,
    agentToken: `agent-${randomUUID()}`,
    garAudience: 'https://escalator.example.com/registry/gar',
    garServiceAccount: 'pubsub@proj.iam.gserviceaccount.com',
    maxBodyBytes: 256 * 1024,
    scoped: options.scoped ?? false,
    pathToken(source) {
      return this.scoped ? `${source}-${this.registryToken}` : this.registryToken;
    },
    ciOidcToken(claims = {}) {
      const now = Math.floor(Date.now() / 1000);
      const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid: 'k1', typ: 'JWT' })).toString('base64url');
      const body = Buffer.from(
        JSON.stringify({
          iss: 'https://token.actions.githubusercontent.com',
          aud: 'https://escalator.example.com',
          repository: 'fuzz/app',
          repository_owner: 'fuzz',
          iat: now,
          nbf: now - 600,
          exp: now + 300,
          ...claims,
        }),
      ).toString('base64url');
      return `${header}.${body}.${sign('RSA-SHA256', Buffer.from(`${header}.${body}`), google.privateKey).toString('base64url')}`;
    },
    garToken(claims = {}) {
      const header = Buffer.from(JSON.stringify({ alg: 'RS256', kid: 'k1', typ: 'JWT' })).toString('base64url');
      const body = Buffer.from(
        JSON.stringify({
          iss: 'https://accounts.google.com',
          aud: this.garAudience,
          email: this.garServiceAccount,
          email_verified: true,
          iat: Math.floor(Date.now() / 1000) - 60,
          exp: Math.floor(Date.now() / 1000) + 3000,
          ...claims,
        }),
      ).toString('base64url');
      return `${header}.${body}.${sign('RSA-SHA256', Buffer.from(`${header}.${body}`), google.privateKey).toString('base64url')}`;
    },
  };
  const url = options.redisUrl ?? redisUrl;
  const app = await startEscalator(
    {
      ESCALATOR_ROLE: 'web',
      APP_ID: '123',
      PRIVATE_KEY: privateKey,
      WEBHOOK_SECRET: secrets.webhookSecret,
      PORT: '0',
      HOST: '127.0.0.1',
      REDIS_URL: url,
      LOG_LEVEL: 'silent',
      ...(secrets.scoped
        ? {
            // Every credential bound to one owner; path tokens are secrets of their own.
            ESCALATOR_INTAKE_TOKENS: JSON.stringify([
              {
                name: 'fuzz-registry',
                sha256: sha256(secrets.registryToken),
                owners: ['fuzz'],
                sources: sourcesBy('bearer'),
              },
              { name: 'fuzz-ci', sha256: sha256(secrets.ciToken), owners: ['fuzz'], sources: ['ci'] },
              ...sourcesBy('path-token').map((source) => ({
                name: `fuzz-${source}`,
                sha256: sha256(secrets.pathToken(source)),
                owners: ['fuzz'],
                sources: [source],
              })),
            ]),
            ESCALATOR_CI_OIDC_AUDIENCE: 'https://escalator.example.com',
            ESCALATOR_CI_OIDC_JWKS_URL: join(dir, 'jwks.json'),
          }
        : { ESCALATOR_REGISTRY_TOKEN: secrets.registryToken, ESCALATOR_CI_TOKEN: secrets.ciToken }),
      ESCALATOR_ADMIN_TOKEN: secrets.adminToken,
      ESCALATOR_AGENT_TOKEN: secrets.agentToken,
      ESCALATOR_GAR_AUDIENCE: secrets.garAudience,
      ESCALATOR_GAR_SERVICE_ACCOUNT: secrets.garServiceAccount,
      ESCALATOR_GAR_JWKS_URL: join(dir, 'jwks.json'),
      ESCALATOR_MAX_BODY_BYTES: String(secrets.maxBodyBytes),
      FUZZ_RELAY_SECRET: secrets.relaySecret,
      ESCALATOR_RELAY_TARGETS: JSON.stringify([
        {
          name: 'argocd',
          type: 'argocd',
          url: 'http://127.0.0.1:9/api/webhook',
          secret: { env: 'FUZZ_RELAY_SECRET' },
          repos: ['*/*'],
        },
      ]),
      ...options.env,
    } as NodeJS.ProcessEnv,
    { prefix, log: options.log ?? createLogger({ level: 'silent' }) },
  );
  const redis = new Redis(url, {
    lazyConnect: true,
    maxRetriesPerRequest: 1,
    enableOfflineQueue: false,
    connectTimeout: 1_000,
  });
  redis.on('error', () => undefined);
  await redis.connect().catch(() => undefined);
  const queues = queueNames.map((name) => new Queue(name, { connection: redis, prefix, skipWaitingForReady: true }));
  for (const queue of queues) queue.on('error', () => undefined);
  return {
    url: app.url,
    prefix,
    secrets,
    app,
    async jobCount() {
      const counts = await Promise.all(queues.map((queue) => queue.getJobCounts()));
      return counts.reduce((sum, byState) => sum + Object.values(byState).reduce((a, b) => a + b, 0), 0);
    },
    async keyCount() {
      let cursor = '0';
      let count = 0;
      do {
        const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
        cursor = next;
        count += keys.length;
      } while (cursor !== '0');
      return count;
    },
    async close() {
      await app.close();
      if (redis.status === 'ready') {
        for (const queue of queues) await queue.obliterate({ force: true }).catch(() => undefined);
        let cursor = '0';
        do {
          const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
          cursor = next;
          if (keys.length > 0) await redis.del(...keys);
        } while (cursor !== '0');
      }
      await Promise.all(queues.map((queue) => queue.close().catch(() => undefined)));
      redis.disconnect();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The registries of the table (src/events/registries/index.ts) that authenticate with `auth`. */
export function sourcesBy(auth: RegistryAuth): string[] {
  return registries.filter((registry) => registry.auth === auth).map((registry) => registry.source);
}

function sha256(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}

/** `sha256=<hex>` over the exact bytes, as GitHub signs a delivery. */
export function githubSignature(secret: string, body: Buffer): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}
