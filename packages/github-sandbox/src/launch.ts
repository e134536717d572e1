import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { findRedis, stopChild, type RedisHandle } from './redis.js';
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
  /** How to start Escalator; default `node dist/main/index.js`, or `src/main/index.ts` through tsx. */
  appCommand?: string[];
  /** The project root (where dist/ and src/ are). */
  root: string;
  env: NodeJS.ProcessEnv;
  /** Where Escalator's own output goes (the sandbox keeps stdout for its own lines). */
  appOutput?: NodeJS.WritableStream;
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
}

export interface RunningSandbox {
  ready: SandboxReady;
  simulator: Simulator;
  /** Resolves when Escalator exits on its own (with its exit code). */
  appExited: Promise<number | null>;
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
  try {
    const redis: RedisHandle = await findRedis(options.env);
    cleanup.push(() => redis.stop());
    const simulator = await startSimulator({ port: options.githubPort });
    cleanup.push(() => simulator.close());
    const developer = simulator.context.state.user(simulator.user.login);
    if (!developer) throw new Error('The simulator lost its developer user.');
    const repo = await createRepository(simulator.context, developer, {
      owner: SANDBOX_REPOSITORY.owner,
      name: SANDBOX_REPOSITORY.name,
      folder: options.repoDir,
      description: 'GitOps repository seeded by npm run sandbox',
      teams: ['release-managers'],
      collaborators: { 'release-manager': 'maintain' },
    });
    const appUrl = `http://127.0.0.1:${options.appPort}`;
    simulator.setWebhookUrl(`${appUrl}/api/github/webhooks`);
    const registryToken = options.registryToken ?? randomBytes(16).toString('hex');
    const child = startApp(options, {
      APP_ID: String(simulator.app.id),
      PRIVATE_KEY: simulator.app.privateKey,
      WEBHOOK_SECRET: simulator.app.webhookSecret,
      GITHUB_API_URL: simulator.apiUrl,
      REDIS_URL: redis.url,
      PORT: String(options.appPort),
      HOST: '127.0.0.1',
      ESCALATOR_REGISTRY_TOKEN: registryToken,
      LOG_LEVEL: options.env.LOG_LEVEL ?? 'info',
    });
    cleanup.push(() => stopChild(child));
    const appExited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await waitForHealth(appUrl, appExited);
    return {
      ready: {
        api_url: simulator.apiUrl,
        github_url: simulator.url,
        app_url: appUrl,
        repository: `${repo.owner.login}/${repo.name}`,
        repository_url: simulator.context.urls.repoHtml(`${repo.owner.login}/${repo.name}`),
        registry_token: registryToken,
        user: simulator.user,
        app_id: simulator.app.id,
        redis_url: redis.url,
      },
      simulator,
      appExited,
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

/** Polls `GET /healthz` until it answers 200; fails when the App exits or after a minute. */
async function waitForHealth(appUrl: string, exited: Promise<number | null>): Promise<void> {
  let exitCode: number | null | undefined;
  void exited.then((code) => {
    exitCode = code;
  });
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (exitCode !== undefined)
      throw new Error(`Escalator exited with code ${exitCode} before it was ready; its output is above.`);
    const healthy = await fetch(`${appUrl}/healthz`).then(
      (response) => response.ok,
      () => false,
    );
    if (healthy) return;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new Error(`Escalator did not answer ${appUrl}/healthz within a minute; its output is above.`);
}

/** The human part printed after `SANDBOX_READY`: where things are and what to try. */
export function renderNextSteps(ready: SandboxReady): string {
  const digest = `sha256:${'ab'.repeat(32)}`;
  const event = JSON.stringify({
    events: [
      {
        action: 'push',
        target: {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          repository: 'example/hello',
          tag: '1.1.0',
          digest,
          url: `https://ghcr.io/v2/example/hello/manifests/${digest}`,
        },
        request: { host: 'ghcr.io' },
      },
    ],
  });
  const auth = `-H 'Authorization: token ${ready.user.token}'`;
  return [
    '',
    'Escalator sandbox is running.',
    `  GitHub (simulated)   ${ready.api_url}   repository ${ready.repository}`,
    `  Escalator            ${ready.app_url}`,
    '',
    'Try it:',
    '  1. Announce a new image, as a registry would:',
    `     curl -sS -X POST ${ready.app_url}/registry/distribution \\`,
    `       -H 'Authorization: Bearer ${ready.registry_token}' \\`,
    "       -H 'Content-Type: application/vnd.docker.distribution.events.v2+json' \\",
    `       -d '${event}'`,
    '  2. List the pull requests Escalator opened:',
    `     curl -sS ${auth} ${ready.api_url}/repos/${ready.repository}/pulls`,
    '  3. Merge pull request 1 as a person would:',
    `     curl -sS -X PUT ${auth} ${ready.github_url}/_sandbox/repos/${ready.repository}/pulls/1/merge`,
    '  4. See every webhook the simulated GitHub delivered:',
    `     curl -sS ${auth} ${ready.github_url}/_sandbox/deliveries`,
    '',
    'Press Ctrl-C to stop everything.',
    '',
  ].join('\n');
}
