/**
 * What Escalator writes to GitHub during a load run, seen from inside the sandbox simulator (it
 * runs in the bench process): every pull request title Escalator sets (the moment a bump PR shows
 * a tag), every commit it makes, every `escalator/diff` check run it creates (the moment a pull
 * request update has its rendered diff), and every GitHub API call it made (route, status, and
 * the installation whose token made it). Nothing is polled, so observing costs the simulator nothing.
 */
import type { Exchange, Simulator } from '@escalator/github-sandbox';
import { versionOf } from './fixture.js';

export interface RepoWrites {
  bumpCommits: number;
  otherCommits: number;
  pullsOpened: number;
  pullsUpdated: number;
}

interface PullBody {
  number?: number;
  title?: string;
  head?: { ref?: string; sha?: string };
}

/** One API request Escalator made, as the simulator answered it. */
export interface ObservedCall {
  at: number;
  /** The account of the installation whose token made it; `app` for the App's JWT. */
  account: string;
  method: string;
  /** `GET /repos/{owner}/{repo}/contents/{path}`: the route, without the values in the path. */
  route: string;
  status: number;
  /** A secondary-limit answer: 403 or 429 with `retry-after` or GitHub's secondary-limit message. */
  secondary: boolean;
}

const repoPath = /^\/repos\/[^/]+\/([^/]+)\/(.+)$/;

/** The route of a request path: owner, repository, refs, file paths, SHAs and numbers replaced by names. */
export function routeOf(method: string, path: string): string {
  const match = /^\/repos\/[^/]+\/[^/]+(?:\/(.*))?$/.exec(path);
  if (!match) return `${method} ${path.replace(/\/\d+(?=\/|$)/g, '/{n}')}`;
  const rest = (match[1] ?? '')
    .replace(/^contents\/.*/, 'contents/{path}')
    .replace(/^git\/(refs?)\/.*/, 'git/$1/{ref}')
    .replace(/^(commits|branches|compare)\/[^/]+/, '$1/{ref}')
    .replace(/\b[0-9a-f]{40}\b/g, '{sha}')
    .replace(/\/\d+(?=\/|$)/g, '/{n}');
  return `${method} /repos/{owner}/{repo}${rest ? `/${rest}` : ''}`;
}

export class GitHubObserver {
  /** Per `<repo> <branch>`: each time Escalator set a PR title naming a tag `1.n.0`, in order. */
  readonly shown = new Map<string, Array<{ at: number; version: number }>>();
  /** Head SHA → when Escalator created its `escalator/diff` check run on it. */
  readonly diffChecks = new Map<string, number>();
  readonly writes = new Map<string, RepoWrites>();
  /** API and GraphQL requests made by Escalator (anything not sent with the control user's token). */
  calls = 0;
  /** Answers of 5xx the simulator gave Escalator. */
  serverErrors = 0;
  /** Every API call Escalator made, in order. */
  readonly log: ObservedCall[] = [];
  private readonly unsubscribe: () => void;

  constructor(
    private readonly sim: Simulator,
    private readonly userToken: string,
  ) {
    this.unsubscribe = sim.onExchange((exchange) => this.add(exchange));
  }

  close(): void {
    this.unsubscribe();
  }

  /** Highest version a PR title on `branch` of `repo` has shown so far (0 when none). */
  highestShown(repo: string, branch: string): number {
    return Math.max(0, ...(this.shown.get(`${repo} ${branch}`) ?? []).map((entry) => entry.version));
  }

  /** When a PR title on `branch` first showed `version` or a newer one, not before `after`. */
  firstShown(repo: string, branch: string, version: number, after: number): number | undefined {
    return this.shown.get(`${repo} ${branch}`)?.find((entry) => entry.version >= version && entry.at >= after)?.at;
  }

  private accountOf(authorization: string | undefined): string {
    const credential = /^(?:token|bearer)\s+(\S+)$/i.exec((authorization ?? '').trim())?.[1] ?? '';
    if (!credential.startsWith('ghs_')) return 'app';
    const state = this.sim.context.state;
    const token = state.installationTokens.get(credential);
    return (token && state.installations.get(token.installationId)?.account.login) ?? 'unknown';
  }

  private repoWrites(repo: string): RepoWrites {
    let found = this.writes.get(repo);
    if (!found) {
      found = { bumpCommits: 0, otherCommits: 0, pullsOpened: 0, pullsUpdated: 0 };
      this.writes.set(repo, found);
    }
    return found;
  }

  private add(exchange: Exchange): void {
    if (exchange.surface !== 'api' && exchange.surface !== 'graphql') return;
    if ((exchange.requestHeaders.authorization ?? '').includes(this.userToken)) return;
    this.calls++;
    if (exchange.status >= 500) this.serverErrors++;
    const message = (exchange.responseBody as { message?: unknown } | undefined)?.message;
    this.log.push({
      at: Date.now(),
      account: this.accountOf(exchange.requestHeaders.authorization),
      method: exchange.method,
      route:
        exchange.surface === 'graphql'
          ? `POST /graphql (${/^\s*mutation\b/.test(String((exchange.requestBody as { query?: unknown } | undefined)?.query ?? '')) ? 'mutation' : 'query'})`
          : routeOf(exchange.method, exchange.path),
      status: exchange.status,
      secondary:
        (exchange.status === 403 || exchange.status === 429) &&
        (exchange.responseHeaders['retry-after'] !== undefined ||
          /secondary rate limit/i.test(typeof message === 'string' ? message : '')),
    });
    if (exchange.method === 'GET' || exchange.status >= 300) return;
    if (exchange.surface === 'graphql') {
      // A commit through `createCommitOnBranch`: its repository and headline are in the input.
      const input = Object.values(
        ((exchange.requestBody as { variables?: Record<string, unknown> } | undefined)?.variables ?? {}) as Record<
          string,
          { branch?: { repositoryNameWithOwner?: string }; message?: { headline?: string } }
        >,
      ).find((value) => value && typeof value === 'object' && value.branch?.repositoryNameWithOwner);
      const repo = input?.branch?.repositoryNameWithOwner?.split('/')[1];
      const ok = !(exchange.responseBody as { errors?: unknown } | undefined)?.errors;
      if (repo && ok) {
        if (input?.message?.headline?.startsWith('Bump ')) this.repoWrites(repo).bumpCommits++;
        else this.repoWrites(repo).otherCommits++;
      }
      return;
    }
    const match = repoPath.exec(exchange.path);
    if (!match) return;
    const [, repo = '', rest = ''] = match;
    const at = Date.now();
    const body = (exchange.requestBody ?? {}) as { message?: string; name?: string; head_sha?: string };
    if (exchange.method === 'POST' && rest === 'git/commits') {
      if (body.message?.startsWith('Bump ')) this.repoWrites(repo).bumpCommits++;
      else this.repoWrites(repo).otherCommits++;
    } else if (exchange.method === 'POST' && rest === 'check-runs') {
      if (body.name === 'escalator/diff' && body.head_sha && !this.diffChecks.has(body.head_sha))
        this.diffChecks.set(body.head_sha, at);
    } else if (
      (exchange.method === 'POST' && rest === 'pulls') ||
      (exchange.method === 'PATCH' && /^pulls\/\d+$/.test(rest))
    ) {
      const pull = exchange.responseBody as PullBody | undefined;
      if (exchange.method === 'POST') this.repoWrites(repo).pullsOpened++;
      else this.repoWrites(repo).pullsUpdated++;
      const tag = / to (1\.\d+\.0)(?: |$)/.exec(pull?.title ?? '')?.[1];
      const branch = pull?.head?.ref;
      if (!tag || !branch) return;
      const key = `${repo} ${branch}`;
      const list = this.shown.get(key) ?? [];
      list.push({ at, version: versionOf(tag) });
      this.shown.set(key, list);
    }
  }
}
