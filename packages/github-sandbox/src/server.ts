import { createHash, createPublicKey, generateKeyPairSync, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { authenticate, isFailure } from './auth.js';
import { ConditionalRequests } from './conditional.js';
import type { SandboxContext } from './context.js';
import { HttpError, Router, type ApiRequest, type ApiResponse } from './http.js';
import { KeyedLock } from './lock.js';
import type { Principal } from './model.js';
import { callerKey, RateLimiter, SecondaryLimiter, type SecondaryLimits } from './rate-limit.js';
import { registerAppRoutes } from './routes/apps.js';
import { registerCheckRoutes } from './routes/checks.js';
import { registerContentRoutes } from './routes/contents.js';
import { registerControlRoutes } from './routes/control.js';
import { registerDeploymentRoutes } from './routes/deployments.js';
import { registerGateRoutes } from './routes/gates.js';
import { registerGitDataRoutes } from './routes/git-data.js';
import { registerGraphqlRoutes } from './routes/graphql.js';
import { registerIssueRoutes } from './routes/issues.js';
import { registerLabelRoutes } from './routes/labels.js';
import { registerMetaRoutes } from './routes/meta.js';
import { registerPullRoutes } from './routes/pulls.js';
import { registerReleaseRoutes } from './routes/releases.js';
import { registerRepoRoutes } from './routes/repos.js';
import { SandboxState } from './state.js';
import { Urls } from './urls.js';
import { WebhookDispatcher } from './webhooks.js';

/** How to start the simulator. Everything is optional. */
export interface SimulatorOptions {
  /** Listen port; 0 (default) picks a free one. Always binds 127.0.0.1. */
  port?: number;
  /** Where bare repositories live; default a fresh temp dir removed on `close()`. */
  dataDir?: string;
  /** The real clock by default; tests may pin it. The control API can move it forward. */
  clock?: () => Date;
  app?: {
    slug?: string;
    name?: string;
    /** Where webhooks go (the App's `POST /api/github/webhooks`); settable later. */
    webhookUrl?: string | null;
    webhookSecret?: string;
    /** The App's permissions (default: what Escalator's app.yml asks for). */
    permissions?: Record<string, 'read' | 'write'>;
    /** Repository events the App subscribes to (default: those of Escalator's app.yml the simulator sends). */
    events?: string[];
  };
  /** Login of the human user whose token drives the control API (default `developer`). */
  user?: string;
  /**
   * Enforce GitHub's secondary rate limits per installation (80 content-creating requests a
   * minute, 500 an hour, 100 concurrent), as GitHub does; `true` for the documented numbers.
   * Off by default so tests that are about something else are not slowed; benches turn it on.
   */
  secondaryLimits?: boolean | SecondaryLimits;
}

/** One request/response pair as the simulator handled it (for recorders in tests). */
export interface Exchange {
  surface: 'api' | 'graphql' | 'control' | 'other';
  method: string;
  /** Path without query; for the API, without the `/api/v3` prefix (the OpenAPI path). */
  path: string;
  url: URL;
  requestHeaders: IncomingMessage['headers'];
  requestBody: unknown;
  status: number;
  responseHeaders: Record<string, string>;
  /** Parsed JSON, or undefined for empty and binary bodies. */
  responseBody: unknown;
}

/** A running simulator. */
export interface Simulator {
  /** `http://127.0.0.1:<port>` — web root (`html_url`s, the control API under `/_sandbox`). */
  url: string;
  /** `http://127.0.0.1:<port>/api/v3` — give it to octokit/probot as `baseUrl`. */
  apiUrl: string;
  /** The registered App's credentials, for the App's environment. */
  app: { id: number; slug: string; clientId: string; privateKey: string; webhookSecret: string };
  /** The control API user and their token. */
  user: { login: string; token: string };
  context: SandboxContext;
  /** How many requests the secondary limits refused (0 when they are off). */
  secondaryRefused(): number;
  /** Whether the REST API has a route for `method` and `path` (without `/api/v3` and the query). */
  serves(method: string, path: string): boolean;
  setWebhookUrl(url: string | null): void;
  /** Calls `listener` after every handled request; returns an unsubscribe function. */
  onExchange(listener: (exchange: Exchange) => void): () => void;
  close(): Promise<void>;
}

const MAX_BODY_BYTES = 32 * 1024 * 1024;

/** Starts a GitHub-compatible server backed by real git repositories on disk. */
export async function startSimulator(options: SimulatorOptions = {}): Promise<Simulator> {
  const ownsDataDir = !options.dataDir;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'escalator-sandbox-')));
  const baseClock = options.clock ?? (() => new Date());
  const controls: SandboxContext['controls'] = { throttle: null, clockOffsetMs: 0 };
  const state = new SandboxState(dataDir, () => new Date(baseClock().getTime() + controls.clockOffsetMs));

  const developer = state.createUser(options.user ?? 'developer', 'User', 'Sandbox Developer');
  const userToken = state.issueUserToken(developer);
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const privateKeyPem = privateKey.export({ type: 'pkcs1', format: 'pem' }).toString();
  const slug = options.app?.slug ?? 'escalator';
  const appId = state.nextId();
  state.app = {
    id: appId,
    slug,
    name: options.app?.name ?? 'Escalator',
    clientId: `Iv1.${randomBytes(8).toString('hex')}`,
    owner: developer,
    bot: state.createUser(`${slug}[bot]`, 'Bot'),
    publicKey: createPublicKey(publicKey.export({ type: 'spki', format: 'pem' })),
    webhookSecret: options.app?.webhookSecret ?? randomBytes(20).toString('hex'),
    webhookUrl: options.app?.webhookUrl ?? null,
    permissions: options.app?.permissions ?? {
      checks: 'write',
      contents: 'write',
      deployments: 'write',
      issues: 'write',
      metadata: 'read',
      pull_requests: 'write',
      statuses: 'read',
    },
    events: options.app?.events ?? [
      'check_run',
      'deployment_status',
      'issue_comment',
      'issues',
      'pull_request',
      'push',
      'status',
    ],
    createdAt: state.clock(),
  };

  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const urls = new Urls(origin);
  const context: SandboxContext = {
    state,
    urls,
    controls,
    webhooks: new WebhookDispatcher(state, appId + 1, new URL(origin).host),
    locks: new KeyedLock(),
    verifiedCommits: new Set(),
  };

  const api = new Router();
  registerAppRoutes(api, context);
  registerCheckRoutes(api, context);
  registerGateRoutes(api, context);
  registerReleaseRoutes(api, context); // before the repository routes: `commits/*ref` would take `…/pulls`
  registerDeploymentRoutes(api, context);
  registerRepoRoutes(api, context);
  registerContentRoutes(api, context);
  registerGitDataRoutes(api, context);
  registerPullRoutes(api, context);
  // Standalone issues (the dashboard issue) answer first and hand pull requests' issue routes on.
  registerIssueRoutes(api, context);
  registerLabelRoutes(api, context);
  registerMetaRoutes(api, context);
  const control = new Router();
  registerControlRoutes(control, context);
  const graphql = new Router();
  registerGraphqlRoutes(graphql, context);

  const listeners = new Set<(exchange: Exchange) => void>();
  const limiter = new RateLimiter(() => state.clock());
  const conditional = new ConditionalRequests(() => state.clock());
  const secondary = options.secondaryLimits
    ? new SecondaryLimiter(() => state.clock(), {
        perMinute: 80,
        perHour: 500,
        concurrent: 100,
        ...(options.secondaryLimits === true ? {} : options.secondaryLimits),
      })
    : undefined;
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    void handle(req, res, { context, api, control, graphql, limiter, conditional, secondary, listeners });
  });

  return {
    url: origin,
    apiUrl: urls.apiBase,
    app: {
      id: appId,
      slug,
      clientId: state.app.clientId,
      privateKey: privateKeyPem,
      webhookSecret: state.app.webhookSecret,
    },
    user: { login: developer.login, token: userToken },
    context,
    secondaryRefused: () => [...(secondary?.refused.values() ?? [])].reduce((sum, n) => sum + n, 0),
    serves: (method, path) =>
      api.match(method.toUpperCase(), path.replace(/^\/repositories\/\d+(?=\/|$)/, '/repos/owner/repo')) !== null,
    setWebhookUrl(url) {
      state.requireApp().webhookUrl = url;
    },
    onExchange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async close() {
      await context.webhooks.idle();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      // Each repository's long-lived object reader (git cat-file), before its folder goes.
      await Promise.all([...state.repos.values()].map((repo) => repo.git.close()));
      if (ownsDataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
}

interface Handling {
  context: SandboxContext;
  api: Router;
  control: Router;
  graphql: Router;
  limiter: RateLimiter;
  conditional: ConditionalRequests;
  secondary: SecondaryLimiter | undefined;
  listeners: Set<(exchange: Exchange) => void>;
}

async function handle(req: IncomingMessage, res: ServerResponse, handling: Handling): Promise<void> {
  const { context } = handling;
  const url = new URL(req.url ?? '/', context.urls.origin);
  const requestId = `${randomBytes(2).toString('hex').toUpperCase()}:${randomBytes(3).toString('hex').toUpperCase()}:${randomBytes(4).toString('hex').toUpperCase()}`;
  const surface = surfaceOf(url.pathname);
  const path = surface === 'api' ? url.pathname.slice('/api/v3'.length) || '/' : url.pathname;
  let body: unknown;
  let response: ApiResponse;
  let principal: Principal | null = null;
  let request: ApiRequest | undefined;
  let release: (() => void) | undefined;
  try {
    body = await readJson(req);
    const auth = authenticate(req.headers.authorization, context.state);
    if (isFailure(auth)) throw new HttpError(401, auth.message);
    principal = auth;
    if (surface === 'other') {
      response = await serveArchive(context, req.method ?? 'GET', path);
    } else {
      if (surface !== 'control') handling.limiter.throttle(context.controls, principal, requestId);
      if (handling.secondary && principal?.kind === 'installation' && (surface === 'api' || surface === 'graphql'))
        release = handling.secondary.enter(callerKey(principal), createsContent(surface, req.method, body), requestId);
      const router = surface === 'api' ? handling.api : surface === 'graphql' ? handling.graphql : handling.control;
      const match = router.match(req.method ?? 'GET', surface === 'api' ? repositoryAlias(context, path) : path);
      if (!match) throw new HttpError(404, 'Not Found');
      request = {
        method: req.method ?? 'GET',
        url,
        headers: req.headers,
        body,
        params: match.params,
        principal,
      };
      response = await match.handler(request);
    }
  } catch (error) {
    response = errorResponse(error);
  } finally {
    release?.();
  }
  let payload: Buffer | string | undefined;
  const headers: Record<string, string> = { ...response.headers };
  if (response.raw !== undefined) payload = response.raw;
  else if (response.body !== undefined) {
    payload = JSON.stringify(response.body);
    headers['content-type'] ??= 'application/json; charset=utf-8';
  }
  const method = req.method ?? 'GET';
  const conditional =
    surface === 'api'
      ? handling.conditional.decide(
          method,
          response.status,
          payload,
          headers['content-type'] ?? '',
          callerKey(principal),
          req.headers,
          response.lastModified !== false && request?.paginated !== true,
        )
      : { headers: {}, notModified: false };
  // GitHub points at what a 201 created (issues, statuses, refs, labels in the recordings).
  const created = response.status === 201 && surface === 'api' ? createdUrl(response.body) : undefined;
  if (conditional.notModified) {
    response = { status: 304 };
    payload = undefined;
    delete headers['content-type'];
  }
  Object.assign(
    headers,
    {
      'x-github-request-id': requestId,
      ...(surface === 'api' || surface === 'graphql'
        ? handling.limiter.headers(principal, !conditional.notModified)
        : {}),
      ...(surface === 'api'
        ? { 'x-github-media-type': 'github.v3; format=json', 'x-github-api-version-selected': '2022-11-28' }
        : {}),
      ...(created !== undefined && headers.location === undefined ? { location: created } : {}),
    },
    conditional.headers,
    response.headers,
  );
  res.writeHead(response.status, headers);
  res.end(payload);
  for (const listener of handling.listeners) {
    listener({
      surface,
      method: req.method ?? 'GET',
      path,
      url,
      requestHeaders: req.headers,
      requestBody: body,
      status: response.status,
      responseHeaders: headers,
      responseBody: response.body,
    });
  }
}

/**
 * `/repositories/{id}/…` is GitHub's id-based alias of `/repos/{owner}/{repo}/…`: where renamed
 * repositories redirect and where pagination links point (rename-repository and paginate-issues
 * recordings of @octokit/fixtures).
 */
function repositoryAlias(context: SandboxContext, path: string): string {
  const match = /^\/repositories\/(\d+)(\/.*)?$/.exec(path);
  if (!match) return path;
  const repo = context.state.repoById(Number(match[1]));
  if (!repo) throw new HttpError(404, 'Not Found');
  return `/repos/${repo.owner.login}/${repo.name}${match[2] ?? ''}`;
}

/** GitHub counts POST, PATCH, PUT and DELETE (and GraphQL mutations) as content-creating. */
function createsContent(surface: Exchange['surface'], method: string | undefined, body: unknown): boolean {
  if (surface === 'graphql') {
    const query = typeof body === 'object' && body !== null ? (body as { query?: unknown }).query : undefined;
    return typeof query === 'string' && /^\s*mutation\b/.test(query);
  }
  return method !== 'GET' && method !== 'HEAD';
}

/** The API URL of what a 201 created, when its body names one. */
function createdUrl(body: unknown): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return undefined;
  const url = (body as { url?: unknown }).url;
  return typeof url === 'string' ? url : undefined;
}

function surfaceOf(pathname: string): Exchange['surface'] {
  if (pathname === '/api/v3' || pathname.startsWith('/api/v3/')) return 'api';
  if (pathname === '/api/graphql') return 'graphql';
  return pathname.startsWith('/_sandbox/') ? 'control' : 'other';
}

function errorResponse(error: unknown): ApiResponse {
  if (error instanceof HttpError) return { status: error.status, body: error.toBody(), headers: error.headers };
  const message = error instanceof Error ? error.message : String(error);
  return {
    status: 500,
    body: { message: `Sandbox error: ${message}`, documentation_url: 'https://docs.github.com/rest', status: '500' },
  };
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new HttpError(413, 'Request body too large');
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString('utf8'));
  } catch {
    throw new HttpError(400, 'Problems parsing JSON');
  }
}

/** `codeload`: where `/tarball` and `/zipball` redirect; serves `git archive` of a commit. */
async function serveArchive(context: SandboxContext, method: string, path: string): Promise<ApiResponse> {
  const match = /^\/_codeload\/([^/]+)\/([^/]+)\/legacy\.(tar\.gz|zip)\/([0-9a-f]{40}|refs\/heads\/.+)$/.exec(path);
  const repo = match && context.state.repo(match[1] ?? '', match[2] ?? '');
  if (method !== 'GET' || !match || !repo) throw new HttpError(404, 'Not Found');
  const format = match[3] === 'zip' ? 'zip' : 'tar.gz';
  const sha = /^[0-9a-f]{40}$/.test(match[4] ?? '')
    ? (match[4] ?? '')
    : ((await repo.git.readRef(match[4] ?? '')) ?? '');
  if (!sha || (await repo.git.objectType(sha)) !== 'commit') throw new HttpError(404, 'Not Found');
  const prefix = `${repo.owner.login}-${repo.name}-${sha.slice(0, 7)}`;
  return {
    status: 200,
    raw: await repo.git.archive(sha, `${prefix}/`, format),
    headers: {
      'content-type': format === 'zip' ? 'application/zip' : 'application/x-gzip',
      'content-disposition': `attachment; filename=${prefix}.${format}`,
      // codeload tags archives too (get-archive recording); one commit always packs the same way.
      etag: `"${createHash('sha256').update(`${format}:${sha}`).digest('hex').slice(0, 32)}"`,
    },
  };
}
