/**
 * A typed client for the sandbox control API (`/_sandbox/…`): what a person does in GitHub's
 * UI or with `git push`, plus test switches. GitHub's own REST API on the same server is
 * used with `@octokit/rest` as usual.
 */

/** A webhook delivery as the control API lists it, payload included. */
export interface DeliverySummary {
  id: number;
  guid: string;
  event: string;
  action: string | null;
  status: string;
  status_code: number;
  redelivery: boolean;
  delivered_at: string;
  payload: Record<string, unknown>;
}

/** Options for `createRepo`. `folder` is read by the server process. */
export interface CreateRepoInput {
  /** User or organization (created as an organization when unknown); default the caller. */
  owner?: string;
  name: string;
  folder?: string;
  /** Path → content; merged over the folder's files. */
  files?: Record<string, string>;
  defaultBranch?: string;
  description?: string;
  /** Install the App on it; default true. */
  install?: boolean;
  collaborators?: Record<string, 'admin' | 'maintain' | 'write' | 'triage' | 'read'>;
  /** Team slugs of the owning organization, e.g. `release-managers`. */
  teams?: string[];
  /** Repository topics. */
  topics?: string[];
  /** `public` (default), `private` or `internal`, as GitHub's `visibility`. */
  visibility?: 'public' | 'private' | 'internal';
}

export type RateLimitMode = 'secondary' | 'secondary-429' | 'primary';

/** The control API answered with an error status. */
export class SandboxClientError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
    method: string,
    path: string,
  ) {
    const detail =
      body && typeof body === 'object' && 'message' in body
        ? String((body as { message: unknown }).message)
        : JSON.stringify(body);
    super(`${method} ${path} answered ${status}: ${detail}`);
    this.name = 'SandboxClientError';
  }
}

export class SandboxClient {
  /**
   * @param url the simulator's root URL (`Simulator.url`, the `url` of `SANDBOX_READY`)
   * @param token a user token (`ghp_…`); every call acts as that user
   */
  constructor(
    readonly url: string,
    readonly token: string,
  ) {}

  /** The same server, acting as another user. */
  as(token: string): SandboxClient {
    return new SandboxClient(this.url, token);
  }

  info(): Promise<{
    api_url: string;
    app: { id: number; slug: string; webhook_url: string | null };
    repositories: string[];
    now: string;
  }> {
    return this.call('GET', '/_sandbox/info');
  }

  /** Creates a user (with a token) or an organization (without one). */
  createUser(
    login: string,
    options: { type?: 'User' | 'Organization'; name?: string } = {},
  ): Promise<{ login: string; id: number; type: string; token: string | null }> {
    return this.call('POST', '/_sandbox/users', { login, ...options });
  }

  /** Creates a repository from a folder and/or files, and installs the App on it. */
  createRepo(
    input: CreateRepoInput,
  ): Promise<{ full_name: string; default_branch: string; installation_id: number | null; html_url: string }> {
    return this.call('POST', '/_sandbox/repos', {
      owner: input.owner,
      name: input.name,
      folder: input.folder,
      files: input.files,
      default_branch: input.defaultBranch,
      description: input.description,
      install: input.install,
      collaborators: input.collaborators,
      teams: input.teams,
      topics: input.topics,
      visibility: input.visibility,
    });
  }

  /**
   * Commits files (null deletes) to a branch and pushes, like `git commit && git push`:
   * the App receives `push`, and `synchronize` for pull requests from that branch.
   */
  commit(
    fullName: string,
    input: { branch: string; files: Record<string, string | null>; message?: string; from?: string },
  ): Promise<{ sha: string; before: string }> {
    return this.call('POST', `/_sandbox/repos/${fullName}/commits`, input);
  }

  openPull(
    fullName: string,
    input: { title: string; head: string; base?: string; body?: string },
  ): Promise<{ number: number; html_url: string; head: { sha: string } }> {
    return this.call('POST', `/_sandbox/repos/${fullName}/pulls`, input);
  }

  mergePull(
    fullName: string,
    number: number,
    options: { method?: 'merge' | 'squash'; sha?: string } = {},
  ): Promise<{ sha: string; merged: boolean }> {
    return this.call('PUT', `/_sandbox/repos/${fullName}/pulls/${number}/merge`, {
      merge_method: options.method,
      sha: options.sha,
    });
  }

  comment(fullName: string, number: number, body: string): Promise<{ id: number; body: string }> {
    return this.call('POST', `/_sandbox/repos/${fullName}/issues/${number}/comments`, { body });
  }

  /** Clicks "Re-run" on a completed check run: the App receives `check_run` rerequested. */
  rerequestCheckRun(fullName: string, checkRunId: number): Promise<void> {
    return this.call('POST', `/_sandbox/repos/${fullName}/check-runs/${checkRunId}/rerequest`);
  }

  /** The next `count` REST requests answer like GitHub's rate limits (0 turns it off). */
  setRateLimit(options: { mode?: RateLimitMode; count: number; retryAfter?: number }): Promise<void> {
    return this.call('PUT', '/_sandbox/rate-limit', {
      mode: options.mode,
      count: options.count,
      retry_after: options.retryAfter,
    });
  }

  setWebhookUrl(url: string | null): Promise<void> {
    return this.call('PUT', '/_sandbox/app', { webhook_url: url });
  }

  /** Moves the simulator's clock forward (timestamps, token expiry). */
  advanceClock(seconds: number): Promise<{ now: string }> {
    return this.call('POST', '/_sandbox/clock', { advance_seconds: seconds });
  }

  /** Waits for queued webhooks to be delivered, then lists deliveries, newest first. */
  deliveries(options: { event?: string } = {}): Promise<DeliverySummary[]> {
    const query = options.event ? `?event=${encodeURIComponent(options.event)}` : '';
    return this.call('GET', `/_sandbox/deliveries${query}`);
  }

  private async call<T>(method: string, path: string, body?: unknown): Promise<T> {
    const response = await fetch(`${this.url}${path}`, {
      method,
      headers: {
        authorization: `token ${this.token}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    const parsed: unknown = text ? JSON.parse(text) : undefined;
    if (!response.ok) throw new SandboxClientError(response.status, parsed, method, path);
    return parsed as T;
  }
}
