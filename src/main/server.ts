import type { Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { Probot } from 'probot';
import { formatEnvProblems, loadEnv, type Env } from '../config/env.js';
import { createGitHubApp } from '../intake/github-app.js';
import { createGoogleTokenVerifier } from '../intake/google-oidc.js';
import { loadIntakeCredentials } from '../intake/credentials.js';
import { createGitHubOidcVerifier, githubOidcFromEnv } from '../intake/github-oidc.js';
import { githubWebhookRoute } from '../intake/github-webhook-route.js';
import { relayDelivery } from '../intake/relay-intake.js';
import { loadRelayTargets } from '../config/relay-targets.js';
import { RelayStore } from '../queue/relay-store.js';
import { relayLogRoute } from '../web/relay-log-route.js';
import { agentRouteList, agentRoutes } from '../intake/agent-routes.js';
import { registryRoutes } from '../intake/registry-routes.js';
import { Producer } from '../queue/producer.js';
import { startWorkers, type WorkerDeps } from '../jobs/start-workers.js';
import { RepoState } from '../adapters/store/repo-state.js';
import { createLogger, type Logger } from '../observability/logger.js';
import { clusterSafePrefix, createRedis, pingRedis, waitForRedis } from '../queue/connection.js';
import { healthRoutes } from '../web/health.js';
import { renderIsolationCheck, warnIfProxyIsolation } from './isolation-notice.js';
import { metricsRoute } from '../web/metrics-route.js';
import { dashboardPath, dashboardRoute } from '../web/dashboard.js';
import { registryOf, registrySources } from '../events/index.js';
import { queueDepth } from '../observability/metrics.js';
import { queueNames } from '../jobs/kinds.js';
import { startWebServer, type Handler, type WebServer } from '../web/server.js';

export interface RunningEscalator {
  /** Base URL of the web role ('' when this process runs only workers). */
  url: string;
  log: Logger;
  close(): Promise<void>;
}

/** The environment is wrong; the message lists every problem and how to fix it. */
export class EnvError extends Error {
  override name = 'EnvError';
}

/**
 * Wire the product together:
 * 1. validate the environment (every problem at once)
 * 2. connect to Redis (producer connection for intake, blocking connection for workers)
 * 3. web role: Probot webhook middleware + health routes on one HTTP server
 * 4. worker role: one BullMQ worker per queue
 */
export interface StartOptions {
  log?: Logger;
  /** Redis key prefix of every queue and index key (tests isolate themselves with their own). */
  prefix?: string;
  onGitHubRequest?: WorkerDeps['onGitHubRequest'];
  /** The jobs' clock, for tests that move time (windows, freezes). */
  now?: WorkerDeps['now'];
}

export async function startEscalator(
  source: Readonly<Record<string, string | undefined>>,
  options: StartOptions = {},
): Promise<RunningEscalator> {
  const loaded = loadEnv(source);
  if (!loaded.ok) throw new EnvError(formatEnvProblems(loaded.problems));
  const env: Env = loaded.env;
  // Relay targets are server configuration only: a repository can never add one.
  const relay = loadRelayTargets(source);
  if (!relay.ok) throw new EnvError(formatEnvProblems(relay.problems));
  const targets = relay.targets;
  const role = env.ESCALATOR_ROLE;
  // Intake credentials are server configuration: scoped tokens, each bound to its GitHub owners.
  const intakeCredentials = loadIntakeCredentials(source);
  if (!intakeCredentials.ok) throw new EnvError(formatEnvProblems(intakeCredentials.problems));
  const githubOidc = githubOidcFromEnv(env);
  const log = options.log ?? createLogger({ level: env.LOG_LEVEL });
  for (const legacy of ['ESCALATOR_REGISTRY_TOKEN', 'ESCALATOR_CI_TOKEN'] as const) {
    if (env[legacy] && role !== 'worker')
      log.warn(
        { variable: legacy },
        "A global intake token is set: whoever holds it can announce images into every installation's repositories. Keep it only for a single-organisation setup; use ESCALATOR_INTAKE_TOKENS or GitHub Actions OIDC otherwise (docs/registries.md)",
      );
  }
  const closers: Array<() => Promise<unknown>> = [];

  const producerRedis: Redis = createRedis(env.REDIS_URL, 'producer');
  closers.push(() => producerRedis.quit().catch(() => producerRedis.disconnect()));
  producerRedis.on('error', (error: Error) => log.warn({ err: { message: error.message } }, 'Redis connection error'));

  const prefix = clusterSafePrefix(env.REDIS_URL, options.prefix ?? env.ESCALATOR_REDIS_PREFIX);
  // Give Redis a moment at boot so the first request is not refused; without it the web role
  // still starts (readiness fails and intake answers 503 until Redis answers).
  await waitForRedis(producerRedis, env.REDIS_URL).catch((error: Error) =>
    log.warn({ err: { message: error.message } }, 'Redis is not answering yet'),
  );
  const producer = new Producer(producerRedis, prefix, { dashboard: env.ESCALATOR_DASHBOARD_DEBOUNCE_MS });
  closers.unshift(() => producer.close());

  let web: WebServer | undefined;
  let workers: Worker[] = [];
  try {
    const renders = role === 'worker' || role === 'all';
    // proxy only when the operator chose it, and then said out loud with what it leaves open.
    if (renders) warnIfProxyIsolation(log, env.ESCALATOR_RENDER_ISOLATION);
    if (renders) {
      const connection = createRedis(env.REDIS_URL, 'worker');
      connection.on('error', (error: Error) =>
        log.warn({ err: { message: error.message } }, 'Redis worker connection error'),
      );
      closers.unshift(() => connection.quit().catch(() => connection.disconnect()));
      await waitForRedis(connection, env.REDIS_URL);
      const running = startWorkers({
        env,
        log,
        connection,
        prefix,
        relayTargets: targets,
        ...(options.onGitHubRequest ? { onGitHubRequest: options.onGitHubRequest } : {}),
        ...(options.now ? { now: options.now } : {}),
      });
      workers = running.workers;
      // Close workers first: they finish their current jobs (BullMQ graceful shutdown).
      closers.unshift(() => running.close());
    }
    const health = healthRoutes({
      redis: () => pingRedis(producerRedis),
      credentials: () => Boolean(env.APP_ID && env.PRIVATE_KEY),
      ...(renders ? { renderIsolation: renderIsolationCheck(env.ESCALATOR_RENDER_ISOLATION) } : {}),
    });
    const metrics = metricsRoute({
      refresh: async () => {
        for (const name of queueNames) {
          const { prioritized = 0, ...counts } = await producer
            .queue(name)
            .getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'failed');
          // Jobs with a BullMQ priority (commands of strangers, enqueue.ts) wait too.
          counts.waiting = (counts.waiting ?? 0) + prioritized;
          for (const [state, value] of Object.entries(counts)) queueDepth.set({ queue: name, state }, value);
        }
      },
    });
    if (role === 'web' || role === 'all') {
      const probot = new Probot({
        appId: env.APP_ID,
        privateKey: env.PRIVATE_KEY,
        secret: env.WEBHOOK_SECRET,
        baseUrl: env.GITHUB_API_URL,
        // Probot logs each delivery at debug as `{ event }`, its whole payload (up to 25 MB) included;
        // the delivery's id and event name are enough there: "GitHub event received"
        // (src/intake/github-webhook-route.ts) already says which delivery came in, and for which repository.
        log: log.child({ name: 'probot' }, { serializers: { event: deliveryNamed } }),
      });
      const store = new RepoState(producerRedis, prefix);
      await probot.load(createGitHubApp({ log, producer, store, appId: env.APP_ID }));
      const handlers: Handler[] = [
        health,
        metrics,
        registryRoutes({
          producer,
          log,
          maxBodyBytes: env.ESCALATOR_MAX_BODY_BYTES,
          registryToken: env.ESCALATOR_REGISTRY_TOKEN,
          ciToken: env.ESCALATOR_CI_TOKEN,
          credentials: intakeCredentials.credentials,
          store,
          githubHost: githubWebHost(env.GITHUB_API_URL),
          ...(githubOidc ? { verifyGitHubToken: createGitHubOidcVerifier(githubOidc) } : {}),
          ...(env.ESCALATOR_GAR_AUDIENCE && env.ESCALATOR_GAR_SERVICE_ACCOUNT
            ? {
                verifyGoogleToken: createGoogleTokenVerifier({
                  audience: env.ESCALATOR_GAR_AUDIENCE,
                  serviceAccount: env.ESCALATOR_GAR_SERVICE_ACCOUNT,
                  jwks: env.ESCALATOR_GAR_JWKS_URL,
                }),
              }
            : {}),
        }),
        agentRoutes({
          producer,
          store,
          log,
          token: env.ESCALATOR_AGENT_TOKEN,
          githubHost: githubWebHost(env.GITHUB_API_URL),
        }),
        dashboardRoute({
          queues: queueNames.map((name) => producer.queue(name)),
          adminToken: env.ESCALATOR_ADMIN_TOKEN,
        }),
        relayLogRoute({
          store: new RelayStore(producerRedis, prefix),
          targets: targets.map((t) => t.name),
          adminToken: env.ESCALATOR_ADMIN_TOKEN,
        }),
        githubWebhookRoute({
          probot,
          secret: env.WEBHOOK_SECRET,
          log,
          bufferBytes: env.ESCALATOR_WEBHOOK_BUFFER_BYTES,
          ...(targets.length > 0 ? { onVerified: (delivery) => relayDelivery(producer, targets, delivery) } : {}),
        }),
      ];
      // The 404 names every route, so a mistyped webhook URL is fixed from the answer alone.
      const routes = [
        'GET /healthz',
        'GET /readyz',
        'GET /metrics',
        'POST /api/github/webhooks',
        'POST /api/v1/images',
        'GET /api/v1/images/status/<job>',
        ...registrySources.map((source) =>
          registryOf(source)?.auth === 'path-token' ? `POST /registry/${source}/<token>` : `POST /registry/${source}`,
        ),
        ...agentRouteList,
        `GET ${dashboardPath}`,
        'GET /admin/relay/deliveries',
      ];
      web = await startWebServer({ host: env.HOST, port: env.PORT, handlers, log, routes });
    } else {
      // A worker-only process still answers probes and scrapes.
      web = await startWebServer({ host: env.HOST, port: env.PORT, handlers: [health, metrics], log });
    }
    const server = web;
    closers.unshift(() => server.close());
    log.info({ url: web.url, role }, 'Escalator HTTP listening');
  } catch (error) {
    for (const close of closers) await close().catch(() => undefined);
    throw error;
  }
  log.info({ role, workers: workers.length }, 'Escalator started');
  let closed = false;
  return {
    url: web?.url ?? '',
    log,
    async close() {
      if (closed) return;
      closed = true;
      for (const close of closers)
        await close().catch((error: unknown) => log.warn({ err: error }, 'Shutdown step failed'));
      log.info('Escalator stopped');
    },
  };
}

/** The host of GitHub's web URLs (repository URLs): github.com for api.github.com, else the API's own host (Enterprise). */
function githubWebHost(apiUrl: string | undefined): string {
  if (!apiUrl) return 'github.com';
  const host = new URL(apiUrl).hostname;
  return host === 'api.github.com' ? 'github.com' : host;
}

/** A webhook delivery as Probot's log shows it: its id and event name, never its payload. */
function deliveryNamed(event: unknown): unknown {
  if (typeof event !== 'object' || event === null) return event;
  const { id, name } = event as { id?: unknown; name?: unknown };
  return { id, name };
}
