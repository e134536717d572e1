/**
 * A simulated in-cluster agent for the sandbox and end-to-end tests: it watches the GitOps
 * repository's default branch and, a few seconds after each push, reports every object it owns
 * synced and healthy at the new commit, in the real agent's wire format (sandbox-agent-wire.ts):
 * 1. poll the branch head through the (simulated) GitHub API
 * 2. after `delayMs`, post one report per object to Escalator's /agents/<agent>/<owner>/<repo>
 * 3. a control server (127.0.0.1, random port) turns an object Degraded and back:
 *    `POST /degrade?object=hello-staging[&message=…]`, `POST /recover?object=…`, `GET /` (the states)
 *
 * Dev-only, like the rest of this package: it is started by tests and `npm run sandbox`, never
 * shipped. It knows Escalator only by its wire (the routes and bodies a real agent sends).
 */
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { argoCdBody, fluxEvent, type AgentState, type SimulatedHealth } from './wire.js';

export type SimulatedAgentKind = 'argocd' | 'flux';

/** One object the agent owns: an Argo CD Application (one app) or a Flux Kustomization (every app of an environment). */
export interface AgentObject {
  object: string;
  environment: string;
}

export interface SimulatedAgentOptions {
  agent: SimulatedAgentKind;
  /** Escalator's base URL. */
  escalatorUrl: string;
  /**
   * The key the owner's agents are given (`npx escalator agent-key <owner>`, derived from
   * ESCALATOR_AGENT_TOKEN): Argo CD's bearer token, the key of Flux's HMAC.
   */
  key: string;
  owner: string;
  repo: string;
  branch: string;
  /** Where the agent reads the branch: the simulated GitHub's API and a token that can read the repository. */
  githubApiUrl: string;
  githubToken: string;
  /** The repository URL the agent syncs from (Argo CD's `repoURL`). */
  repoURL: string;
  objects: AgentObject[];
  /** How long after a push the agent reports (default 3 s), and how often it looks (default 1 s). */
  delayMs?: number;
  pollMs?: number;
  argocdUrl?: string;
  /** One line per report sent (the sandbox prints them). */
  log?: (line: string) => void;
}

/** The names a simulated agent gives its objects, and the `health` setting that maps them back. */
export function agentObjects(
  agent: SimulatedAgentKind,
  environments: string[],
  apps: string[],
): { objects: AgentObject[]; health: (environment: string) => string } {
  if (agent === 'argocd')
    return {
      objects: environments.flatMap((environment) =>
        apps.map((app) => ({ object: `${app}-${environment}`, environment })),
      ),
      health: (environment) => `{ argocd: "{app}-${environment}" }`,
    };
  return {
    objects: environments.map((environment) => ({ object: `flux-system/apps-${environment}`, environment })),
    health: (environment) => `{ flux: "flux-system/apps-${environment}" }`,
  };
}

export class SimulatedAgent {
  /** Every report posted, with Escalator's answer. */
  readonly sent: Array<{ object: string; health: SimulatedHealth; revision: string; status: number }> = [];
  private readonly states = new Map<string, AgentState>();
  private head: string | null = null;
  private timer: NodeJS.Timeout | undefined;
  private pending: NodeJS.Timeout | undefined;
  private server: Server | undefined;
  private closed = false;

  constructor(readonly options: SimulatedAgentOptions) {}

  /** Start watching the branch and the control server; resolves with the control URL. */
  async start(): Promise<string> {
    this.server = createServer((req, res) => void this.control(req.method ?? '', req.url ?? '/', res));
    await new Promise<void>((resolve, reject) => {
      this.server?.once('error', reject);
      this.server?.listen(0, '127.0.0.1', () => resolve());
    });
    const poll = async () => {
      if (this.closed) return;
      await this.look().catch((error: Error) =>
        this.options.log?.(`agent: could not read the branch: ${error.message}`),
      );
      if (!this.closed) this.timer = setTimeout(() => void poll(), this.options.pollMs ?? 1000);
    };
    await poll();
    return `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    clearTimeout(this.pending);
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Turn one object Degraded (or back to Healthy) at the commit it runs, and report it now. */
  async set(object: string, health: SimulatedHealth, message?: string): Promise<number> {
    const state = this.states.get(object);
    if (!state) throw new Error(`the agent knows no object ${object}, or has not synced yet`);
    const at = new Date().toISOString();
    const next: AgentState = {
      ...state,
      health,
      at,
      changedAt: state.health === health ? state.changedAt : at,
      ...(message ? { message } : {}),
    };
    if (!message) delete next.message;
    this.states.set(object, next);
    return this.post(next);
  }

  private async look(): Promise<void> {
    const { githubApiUrl, owner, repo, branch, githubToken } = this.options;
    const response = await fetch(`${githubApiUrl}/repos/${owner}/${repo}/branches/${encodeURIComponent(branch)}`, {
      headers: { authorization: `token ${githubToken}`, accept: 'application/vnd.github+json' },
    });
    if (!response.ok) throw new Error(`GitHub answered ${response.status}`);
    const sha = ((await response.json()) as { commit: { sha: string } }).commit.sha;
    if (sha === this.head) return;
    this.head = sha;
    clearTimeout(this.pending);
    // A newer push before the delay ends replaces the pending sync, as a real agent syncs the newest commit.
    this.pending = setTimeout(() => void this.sync(sha), this.options.delayMs ?? 3000);
  }

  private async sync(revision: string): Promise<void> {
    const at = new Date().toISOString();
    for (const { object } of this.options.objects) {
      const before = this.states.get(object);
      // An object held Degraded by the control route stays Degraded at the new commit.
      const health = before?.health ?? 'Healthy';
      const state: AgentState = {
        object,
        revision,
        branch: this.options.branch,
        health,
        changedAt: before && before.health === health ? before.changedAt : at,
        at,
        ...(before?.message ? { message: before.message } : {}),
      };
      this.states.set(object, state);
      await this.post(state).catch((error: Error) =>
        this.options.log?.(`agent: report of ${object} failed: ${error.message}`),
      );
    }
  }

  private async post(state: AgentState): Promise<number> {
    const { agent, escalatorUrl, owner, repo, key } = this.options;
    const url = `${escalatorUrl}/agents/${agent}/${owner}/${repo}`;
    let response: Response;
    if (agent === 'argocd') {
      response = await fetch(url, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: argoCdBody(state, {
          argocdUrl: this.options.argocdUrl ?? 'https://argocd.sandbox.invalid',
          repoURL: this.options.repoURL,
        }),
      });
    } else {
      const { body, signature } = fluxEvent(state, key);
      response = await fetch(url, {
        method: 'POST',
        headers: { 'x-signature': signature, 'content-type': 'application/json' },
        body,
      });
    }
    await response.arrayBuffer();
    this.sent.push({ object: state.object, health: state.health, revision: state.revision, status: response.status });
    this.options.log?.(
      `agent: ${state.object} ${state.health} at ${state.revision.slice(0, 7)} → Escalator answered ${response.status}`,
    );
    return response.status;
  }

  private async control(method: string, path: string, res: ServerResponse): Promise<void> {
    const url = new URL(path, 'http://agent');
    const reply = (status: number, body: unknown): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(`${JSON.stringify(body)}\n`);
    };
    try {
      if (method === 'GET' && url.pathname === '/') return reply(200, Object.fromEntries(this.states));
      const object = url.searchParams.get('object') ?? '';
      if (method === 'POST' && (url.pathname === '/degrade' || url.pathname === '/recover')) {
        const status = await this.set(
          object,
          url.pathname === '/degrade' ? 'Degraded' : 'Healthy',
          url.searchParams.get('message') ?? undefined,
        );
        return reply(200, { object, reported: status });
      }
      return reply(404, { message: 'POST /degrade?object=<name>, POST /recover?object=<name>, or GET /' });
    } catch (error) {
      return reply(409, { message: (error as Error).message });
    }
  }
}
