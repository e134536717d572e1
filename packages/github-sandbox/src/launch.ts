import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seedExampleSources } from './example-images.js';
import { findRedis, stopChild, type RedisHandle } from './redis.js';
import { startSandboxRegistry, type ServedImage } from './registry.js';
import { createRepository } from './repositories.js';
import { startSimulator, type Simulator } from './server.js';

/** What `npm run sandbox` is asked to do. */
export interface SandboxOptions {
  /** Folder seeded as `example/gitops`. */
  repoDir: string;
  /** Port of the simulated GitHub; 0 picks a free one. */
  githubPort: number;
  /** Port Escalator listens on. */
  appPort: number;
  /** Token registries present to Escalator; generated when absent. */
  registryToken?: string;
  /**
   * Every `soak:` of the seeded `.github/escalator.yml` becomes this duration (`30s`), so a soak
   * can be watched ending; only the seeded copy changes, never `repoDir`.
   */
  soak?: string;
  /**
   * Removes this run's Redis keys (every key under `prefix`); called on close after Escalator
   * has stopped, before a private Redis stops.
   */
  forgetRedisKeys?: (redisUrl: string, prefix: string) => Promise<void>;
  /** How to start Escalator; default `node dist/main/index.js`, or `src/main/index.ts` through tsx. */
  appCommand?: string[];
  /** The project root (where dist/ and src/ are). */
  root: string;
  env: NodeJS.ProcessEnv;
  /** Where Escalator's own output goes (the sandbox keeps stdout for its own lines). */
  appOutput?: NodeJS.WritableStream;
  /**
   * Aborted when the sandbox is told to stop while it is still starting (a signal, its parent
   * gone): the start stops what it has started and rejects with SandboxStoppedError.
   */
  signal?: AbortSignal;
}

/** The sandbox was told to stop before it was ready; everything it had started is stopped. */
export class SandboxStoppedError extends Error {
  constructor() {
    super('The sandbox was stopped before it was ready; everything it had started is stopped.');
    this.name = 'SandboxStoppedError';
  }
}

/** The `SANDBOX_READY` document: everything a person or a script needs to use the sandbox. */
export interface SandboxReady {
  api_url: string;
  github_url: string;
  app_url: string;
  repository: string;
  repository_url: string;
  registry_token: string;
  user: { login: string; token: string };
  app_id: number;
  redis_url: string;
  /** This run's Redis key prefix (ESCALATOR_REDIS_PREFIX); its keys are removed on exit. */
  redis_prefix: string;
  /** Bearer token of Escalator's CI API (`POST /api/v1/images`). */
  ci_token: string;
  /** Admin token: the queue dashboard (`/admin/queues`) and the relay log (`/admin/relay/deliveries`). */
  admin_token: string;
  /** The stand-in Argo CD that Escalator relays pushes of the repository to. */
  relay_url: string;
  /** The soak every environment was given (`--soak`), or null when the repository's own soaks apply. */
  soak: string | null;
  /** The sandbox's own process and Escalator's: a signal to either stops the whole sandbox. */
  pids: { sandbox: number; escalator: number };
  /**
   * The local registry serving the example images as `ghcr.io` (Escalator reads ghcr.io there
   * only, and no other registry host: ESCALATOR_REGISTRY_MIRRORS), and what each tag resolves to.
   */
  registry: { url: string; stands_for: string; images: Record<string, string> };
}

/** The registry host the sandbox's local registry stands in for: the example's images are `ghcr.io/example/…`. */
export const SANDBOX_REGISTRY_HOST = 'ghcr.io';

/** The port Escalator should listen on is taken; the message names it and the flag. */
export class PortInUseError extends Error {
  constructor(port: number, flag: string) {
    super(
      [
        `Port ${port} on 127.0.0.1 is already in use (another sandbox or program listens there), so this sandbox did not start.`,
        `Stop the other one (Ctrl-C in its terminal), or choose another port: npm run sandbox -- ${flag} ${port + 1}`,
      ].join('\n'),
    );
    this.name = 'PortInUseError';
  }
}

/** Resolves when `port` can be bound on 127.0.0.1; throws PortInUseError when it is taken. */
export async function assertPortFree(port: number, flag: string): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    const server = createNetServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(error.code === 'EADDRINUSE' || error.code === 'EACCES' ? new PortInUseError(port, flag) : error),
    );
    server.listen(port, '127.0.0.1', () => server.close(() => resolve()));
  });
}

export interface RunningSandbox {
  ready: SandboxReady;
  simulator: Simulator;
  /** Resolves when Escalator exits on its own (with its exit code). */
  appExited: Promise<number | null>;
  /** Resolves when the private redis-server the sandbox started exits; never for another Redis. */
  redisExited: Promise<void>;
  close(): Promise<void>;
}

export const SANDBOX_REPOSITORY = { owner: 'example', name: 'gitops' };

/**
 * 1. find Redis (REDIS_URL, local 6379, or a private redis-server)
 * 2. start the simulated GitHub and register the App with a fresh key pair
 * 3. seed the GitOps repository and install the App on it
 * 4. start Escalator pointed at both, and wait until it is healthy
 */
export async function runSandbox(options: SandboxOptions): Promise<RunningSandbox> {
  const cleanup: (() => Promise<void>)[] = [];
  const close = async () => {
    // Last started, first stopped: Escalator, then GitHub, then Redis. Runs once.
    for (let step = cleanup.pop(); step; step = cleanup.pop()) await step().catch(() => undefined);
  };
  const stopped = () => {
    if (options.signal?.aborted) throw new SandboxStoppedError();
  };
  try {
    // Before anything starts: a taken port would otherwise answer our health check for us.
    await assertPortFree(options.appPort, '--app-port');
    if (options.githubPort !== 0) await assertPortFree(options.githubPort, '--github-port');
    const redis: RedisHandle = await findRedis(options.env);
    cleanup.push(() => redis.stop());
    stopped();
    // Each run has its own keys: a second run on the same Redis starts from nothing, as the first did.
    const redisPrefix = `sandbox-${randomBytes(6).toString('hex')}`;
    const forget = options.forgetRedisKeys;
    if (forget) cleanup.push(() => forget(redis.url, redisPrefix));
    const simulator = await startSimulator({ port: options.githubPort });
    cleanup.push(() => simulator.close());
    const relay = await startRelayReceiver();
    cleanup.push(() => relay.close());
    // The example images, with their source repositories in the simulated GitHub, from a registry
    // on 127.0.0.1: Escalator reads ghcr.io there, and no other registry (nothing leaves the machine).
    const builds = await seedExampleSources(simulator.context, {
      webUrl: simulator.url,
      apiUrl: simulator.apiUrl,
      login: simulator.user.login,
      token: simulator.user.token,
      owner: SANDBOX_REPOSITORY.owner,
    });
    const registry = await startSandboxRegistry(SANDBOX_REGISTRY_HOST, builds);
    cleanup.push(() => registry.close());
    stopped();
    const seeded = seedCopy(options.repoDir, { soak: options.soak, images: registry.images, host: registry.host });
    const developer = simulator.context.state.user(simulator.user.login);
    if (!developer) throw new Error('The simulator lost its developer user.');
    const repo = await createRepository(simulator.context, developer, {
      owner: SANDBOX_REPOSITORY.owner,
      name: SANDBOX_REPOSITORY.name,
      folder: seeded.dir,
      description: 'GitOps repository seeded by npm run sandbox',
      teams: ['release-managers'],
      collaborators: { 'release-manager': 'maintain' },
    }).finally(seeded.remove);
    const appUrl = `http://127.0.0.1:${options.appPort}`;
    simulator.setWebhookUrl(`${appUrl}/api/github/webhooks`);
    const registryToken = options.registryToken ?? randomBytes(16).toString('hex');
    const ciToken = randomBytes(16).toString('hex');
    const adminToken = randomBytes(16).toString('hex');
    const relaySecret = randomBytes(16).toString('hex');
    const repository = `${repo.owner.login}/${repo.name}`;
    stopped();
    const child = startApp(options, {
      APP_ID: String(simulator.app.id),
      PRIVATE_KEY: simulator.app.privateKey,
      WEBHOOK_SECRET: simulator.app.webhookSecret,
      GITHUB_API_URL: simulator.apiUrl,
      REDIS_URL: redis.url,
      PORT: String(options.appPort),
      HOST: '127.0.0.1',
      ESCALATOR_REGISTRY_TOKEN: registryToken,
      ESCALATOR_CI_TOKEN: ciToken,
      ESCALATOR_ADMIN_TOKEN: adminToken,
      ESCALATOR_REDIS_PREFIX: redisPrefix,
      ESCALATOR_REGISTRY_MIRRORS: JSON.stringify({ [registry.host]: registry.url }),
      ESCALATOR_RELAY_TARGETS: JSON.stringify([
        {
          name: 'sandbox-argocd',
          type: 'argocd',
          url: relay.url,
          secret: { env: 'SANDBOX_RELAY_SECRET' },
          repos: [repository],
        },
      ]),
      SANDBOX_RELAY_SECRET: relaySecret,
      LOG_LEVEL: options.env.LOG_LEVEL ?? 'info',
      // This GitHub enforces no secondary rate limits (the simulator's `secondaryLimits` is off),
      // so a write budget sized for GitHub's (80 writes a minute) would only hold the newcomer
      // back: the first minute seeds four pull requests with their checks, comments and
      // deployments, and the soak of step 3 then waited ~40 s for a write slot. Set in the
      // environment, the budget still wins.
      ESCALATOR_GITHUB_WRITES_PER_MINUTE: options.env.ESCALATOR_GITHUB_WRITES_PER_MINUTE ?? '10000',
      ESCALATOR_GITHUB_WRITES_PER_HOUR: options.env.ESCALATOR_GITHUB_WRITES_PER_HOUR ?? '100000',
    });
    cleanup.push(() => stopChild(child));
    const appExited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await waitForHealth(appUrl, adminToken, appExited, options.signal);
    return {
      ready: {
        api_url: simulator.apiUrl,
        github_url: simulator.url,
        app_url: appUrl,
        repository,
        repository_url: simulator.context.urls.repoHtml(repository),
        registry_token: registryToken,
        user: simulator.user,
        app_id: simulator.app.id,
        redis_url: redis.url,
        redis_prefix: redisPrefix,
        ci_token: ciToken,
        admin_token: adminToken,
        relay_url: relay.url,
        soak: options.soak ?? null,
        pids: { sandbox: process.pid, escalator: child.pid ?? 0 },
        registry: {
          url: registry.url,
          stands_for: registry.host,
          images: Object.fromEntries(
            registry.images.map((image) => [`${registry.host}/${image.repository}:${image.tag}`, image.digest]),
          ),
        },
      },
      simulator,
      appExited,
      redisExited: redis.exited,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * The command that runs the product: the build when it is at least as new as every source
 * file (a stale dist/ would run yesterday's product), the sources through tsx otherwise.
 */
export function defaultAppCommand(root: string): string[] {
  const built = join(root, 'dist', 'main', 'index.js');
  if (existsSync(built) && statSync(built).mtimeMs >= newestMtime(join(root, 'src'))) return [process.execPath, built];
  return [process.execPath, '--import', 'tsx', join(root, 'src', 'main', 'index.ts')];
}

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(path) : statSync(path).mtimeMs);
  }
  return newest;
}

function startApp(options: SandboxOptions, env: Record<string, string>): ChildProcess {
  const [command = process.execPath, ...args] = options.appCommand ?? defaultAppCommand(options.root);
  const child = spawn(command, args, {
    cwd: options.root,
    env: { ...options.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = options.appOutput ?? process.stderr;
  child.stdout?.pipe(output, { end: false });
  child.stderr?.pipe(output, { end: false });
  return child;
}

/**
 * A copy of `dir` whose `.github/escalator.yml` has every `soak:` set to `soak` (line by line:
 * every other byte stays). `remove` deletes the copy once it is seeded.
 */
export function withSoak(dir: string, soak: string): { dir: string; remove: () => void } {
  const copy = mkdtempSync(join(tmpdir(), 'escalator-sandbox-'));
  const remove = () => rmSync(copy, { recursive: true, force: true });
  try {
    cpSync(dir, copy, { recursive: true, filter: (source) => !source.split(/[\\/]/).includes('.git') });
    for (const name of ['escalator.yml', 'escalator.yaml']) {
      const path = join(copy, '.github', name);
      if (!existsSync(path)) continue;
      const text = readFileSync(path, 'utf8');
      writeFileSync(path, text.replace(/^(\s*(?:-\s+)?soak:[ \t]*)(?:"[^"\n]*"|'[^'\n]*'|[^\s#]+)/gm, `$1${soak}`));
    }
  } catch (error) {
    remove();
    throw error;
  }
  return { dir: copy, remove };
}

/**
 * The copy of `dir` that is seeded: with `soak` (withSoak), and with every pinned digest of an
 * image the sandbox registry serves set to the digest it serves for that tag (the registry builds
 * its images at start, so their digests are this run's). Only one-line Kustomize entries are
 * touched (`- {name: ghcr.io/example/hello, newTag: 1.0.0, digest: sha256:…}`, the example's
 * form); `dir` itself never changes.
 */
export function seedCopy(
  dir: string,
  options: { soak?: string | undefined; images: readonly ServedImage[]; host: string },
): { dir: string; remove: () => void } {
  const copy = options.soak ? withSoak(dir, options.soak) : copyOf(dir);
  try {
    const served = new Map(options.images.map((image) => [`${options.host}/${image.repository}:${image.tag}`, image]));
    const entry = /(\{\s*name:\s*)([^,\s}]+)(\s*,\s*newTag:\s*)([^,\s}]+)(\s*,\s*digest:\s*)(sha256:[0-9a-f]{64})/g;
    const walk = (folder: string): void => {
      for (const item of readdirSync(folder, { withFileTypes: true })) {
        const path = join(folder, item.name);
        if (item.isDirectory()) walk(path);
        else if (/\.ya?ml$/.test(item.name)) {
          const text = readFileSync(path, 'utf8');
          const pinned = text.replace(entry, (whole, a, name: string, b, tag: string, c) => {
            const image = served.get(`${name}:${tag}`);
            return image ? `${a}${name}${b}${tag}${c}${image.digest}` : whole;
          });
          if (pinned !== text) writeFileSync(path, pinned);
        }
      }
    };
    walk(copy.dir);
  } catch (error) {
    copy.remove();
    throw error;
  }
  return copy;
}

function copyOf(dir: string): { dir: string; remove: () => void } {
  const copy = mkdtempSync(join(tmpdir(), 'escalator-sandbox-'));
  const remove = () => rmSync(copy, { recursive: true, force: true });
  try {
    cpSync(dir, copy, { recursive: true, filter: (source) => !source.split(/[\\/]/).includes('.git') });
  } catch (error) {
    remove();
    throw error;
  }
  return { dir: copy, remove };
}

/** A stand-in for Argo CD's `/api/webhook`: answers 200 to every relayed push, so the relay log shows deliveries. */
async function startRelayReceiver(): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createHttpServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(200, { 'content-type': 'text/plain' }).end('ok\n'));
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/api/webhook`,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/**
 * Polls until this run's Escalator answers: `GET /healthz` 200 and the admin route accepting this
 * run's admin token (another process on the port would not know it). Fails when the App exits
 * or after a minute.
 */
async function waitForHealth(
  appUrl: string,
  adminToken: string,
  exited: Promise<number | null>,
  signal?: AbortSignal,
): Promise<void> {
  let exitCode: number | null | undefined;
  void exited.then((code) => {
    exitCode = code;
  });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (signal?.aborted) throw new SandboxStoppedError();
    if (exitCode !== undefined)
      throw new Error(`Escalator exited with code ${exitCode} before it was ready; its output is above.`);
    const healthy = await fetch(`${appUrl}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    const ours =
      healthy &&
      (await fetch(`${appUrl}/admin/relay/deliveries`, { headers: { authorization: `Bearer ${adminToken}` } }).then(
        (response) => response.ok,
        () => false,
      ));
    if (ours) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`Escalator did not answer ${appUrl}/healthz within a minute; its output is above.`);
}

/**
 * The human part printed after `SANDBOX_READY`: where things are and what to try. Every step is
 * one shell command that works on the shipped example, in order (test/newcomer runs them).
 */
export function renderNextSteps(ready: SandboxReady, more: string[] = []): string {
  // The digests the local registry serves for the two versions the steps announce.
  const served = (tag: string) =>
    ready.registry.images[`${ready.registry.stands_for}/example/hello:${tag}`] ?? `sha256:${'0'.repeat(64)}`;
  const event = JSON.stringify({
    events: [
      {
        action: 'push',
        target: {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          repository: 'example/hello',
          tag: '1.1.0',
          digest: served('1.1.0'),
          url: `https://${ready.registry.stands_for}/v2/example/hello/manifests/${served('1.1.0')}`,
        },
        request: { host: ready.registry.stands_for },
      },
    ],
  });
  const auth = `-H 'Authorization: token ${ready.user.token}'`;
  const repo = `${ready.api_url}/repos/${ready.repository}`;
  // Which number the hello promotion gets depends on whether the world promotion (opened when
  // Escalator first reads the repository) or the bump comes first: found by its branch instead.
  const owner = ready.repository.split('/')[0] ?? '';
  const helloPull = `$(curl -sS ${auth} '${repo}/pulls?head=${owner}:escalator/promote/staging/hello' | grep -o '"number": *[0-9]*' | head -1 | tr -dc 0-9)`;
  const soak = ready.soak
    ? `every soak of the seeded .github/escalator.yml is ${ready.soak} (--soak ${ready.soak})`
    : "the example's soaks are 10m (staging) and 1h (prod); to watch one end, start the sandbox with: npm run sandbox -- --soak 30s";
  return [
    '',
    'Escalator sandbox is running.',
    `  GitHub (simulated)   ${ready.api_url}   repository ${ready.repository}`,
    `  Escalator            ${ready.app_url}`,
    `  Queue dashboard      ${ready.app_url}/admin/queues   (user: any, password: the admin token)`,
    `  Tokens               registry ${ready.registry_token}   CI ${ready.ci_token}   admin ${ready.admin_token}`,
    `  Registry (local)     ${ready.registry.url}   serves ${ready.registry.stands_for}/example/hello and /world; Escalator reads no other registry`,
    `  Redis                ${ready.redis_url}, keys under ${ready.redis_prefix}: (removed when the sandbox stops)`,
    `  Soak                 ${soak}`,
    '',
    'Try it, in this order:',
    '  1. Announce a new image, as a registry would (answers 202 with the job it queued):',
    `     curl -sS -X POST ${ready.app_url}/registry/distribution \\`,
    `       -H 'Authorization: Bearer ${ready.registry_token}' \\`,
    "       -H 'Content-Type: application/vnd.docker.distribution.events.v2+json' \\",
    `       -d '${event}'`,
    '  2. A few seconds later, list the pull requests Escalator opened: two when it first read the repository',
    '     (world 2.3.0 to staging and hello 1.0.0 to prod, what the environment before each already ran), one',
    '     bumping hello in dev that has merged itself (autoMerge), and, from its merge, hello 1.1.0 to staging:',
    `     curl -sS ${auth} '${repo}/pulls?state=all'`,
    "  3. The hello promotion's escalator/soak check: in_progress until the soak has passed, then completed:",
    `     curl -sS ${auth} '${repo}/commits/escalator/promote/staging/hello/check-runs?check_name=escalator/soak'`,
    '  4. Comment on the hello promotion as a person would (its number found by its branch), asking for the plan:',
    `     curl -sS -X POST ${auth} -H 'Content-Type: application/json' \\`,
    `       "${ready.github_url}/_sandbox/repos/${ready.repository}/issues/${helloPull}/comments" -d '{"body": "/escalator plan"}'`,
    "  5. Read the hello promotion's comments: the rendered diff and the reply to /escalator plan:",
    `     curl -sS ${auth} "${repo}/issues/${helloPull}/comments"`,
    '  6. Announce an image from CI, through the CI API (answers 202):',
    `     curl -sS -X POST ${ready.app_url}/api/v1/images -H 'Authorization: Bearer ${ready.ci_token}' \\`,
    `       -H 'Content-Type: application/json' -d '{"image": "${ready.registry.stands_for}/example/hello:1.2.0@${served('1.2.0')}"}'`,
    '  7. The pushes Escalator relayed, re-signed, to the stand-in Argo CD (every push to the repository):',
    `     curl -sS -H 'Authorization: Bearer ${ready.admin_token}' ${ready.app_url}/admin/relay/deliveries`,
    '  8. The webhooks the simulated GitHub delivered to Escalator (without their payloads):',
    `     curl -sS ${auth} '${ready.github_url}/_sandbox/deliveries?payload=false'`,
    '',
    ...more,
    `Open ${ready.app_url}/admin/queues in a browser for the queues. Press Ctrl-C to stop everything.`,
    '',
  ].join('\n');
}
