import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { GitRepository } from './git.js';
import type {
  SandboxApp,
  SandboxCheckRun,
  SandboxComment,
  SandboxCommitStatus,
  SandboxDeployment,
  SandboxDeploymentStatus,
  SandboxInstallation,
  SandboxIssue,
  SandboxPull,
  SandboxRepo,
  SandboxTeam,
  SandboxUser,
} from './model.js';

/** An installation access token and when it stops working. */
export interface InstallationToken {
  token: string;
  installationId: number;
  expiresAt: Date;
  /** Repositories the token is limited to; null means every repository of the installation. */
  repositoryIds: Set<number> | null;
}

/**
 * Installation ids are unique across every simulator in a process, as GitHub's are across GitHub.
 * Two Apps in one process (two stacks a test runs side by side) that share an installation id get
 * each other's tokens: @octokit/auth-app shares in-flight token requests process-wide, keyed by
 * the installation id alone (`pendingPromises` in its dist-node/index.js), and the other
 * simulator answers that token with 401 Bad credentials.
 */
let lastInstallationId = 40_000_000;
function nextInstallationId(): number {
  lastInstallationId += 1;
  return lastInstallationId;
}

/** Everything the simulator knows besides git objects: users, installations, PRs, comments, checks. */
export class SandboxState {
  private lastId = 1000;
  readonly users = new Map<string, SandboxUser>();
  readonly userTokens = new Map<string, SandboxUser>();
  readonly teams = new Map<string, SandboxTeam>();
  readonly repos = new Map<string, SandboxRepo>();
  readonly installations = new Map<number, SandboxInstallation>();
  readonly installationTokens = new Map<string, InstallationToken>();
  readonly pulls = new Map<number, SandboxPull[]>();
  /** Issues that are not pull requests, by repository id. */
  readonly issues = new Map<number, SandboxIssue[]>();
  /** Former full names (lower case) of renamed repositories → repository id, for GitHub's redirects. */
  readonly formerNames = new Map<string, number>();
  readonly comments = new Map<number, SandboxComment>();
  readonly checkRuns = new Map<number, SandboxCheckRun>();
  readonly statuses = new Map<number, SandboxCommitStatus>();
  readonly deployments = new Map<number, SandboxDeployment>();
  readonly deploymentStatuses = new Map<number, SandboxDeploymentStatus>();

  constructor(
    readonly dataDir: string,
    readonly clock: () => Date,
    public app: SandboxApp | null = null,
  ) {}

  nextId(): number {
    this.lastId += 1;
    return this.lastId;
  }

  requireApp(): SandboxApp {
    if (!this.app) throw new Error('The simulator has no App registered yet.');
    return this.app;
  }

  createUser(login: string, type: SandboxUser['type'] = 'User', name = login): SandboxUser {
    const existing = this.user(login);
    if (existing) return existing;
    const id = this.nextId();
    const email = type === 'Bot' ? `${id}+${login}@users.noreply.sandbox` : `${login}@users.noreply.sandbox`;
    const user: SandboxUser = { id, login, type, name, email, createdAt: this.clock() };
    this.users.set(login.toLowerCase(), user);
    return user;
  }

  user(login: string): SandboxUser | undefined {
    return this.users.get(login.toLowerCase());
  }

  /** Issues a personal access token (`ghp_…`) for a user; it acts as that user everywhere. */
  issueUserToken(user: SandboxUser): string {
    const token = `ghp_${randomToken()}`;
    this.userTokens.set(token, user);
    return token;
  }

  createTeam(org: string, slug: string, name = slug): SandboxTeam {
    const key = `${org}/${slug}`.toLowerCase();
    const existing = this.teams.get(key);
    if (existing) return existing;
    const team: SandboxTeam = { id: this.nextId(), org, slug, name };
    this.teams.set(key, team);
    return team;
  }

  team(org: string, slug: string): SandboxTeam | undefined {
    return this.teams.get(`${org}/${slug}`.toLowerCase());
  }

  async createRepo(
    owner: SandboxUser,
    name: string,
    defaultBranch: string,
    description: string | null,
  ): Promise<SandboxRepo> {
    const id = this.nextId();
    const git = await GitRepository.init(join(this.dataDir, `${id}-${owner.login}-${name}.git`), defaultBranch);
    const now = this.clock();
    const repo: SandboxRepo = {
      id,
      owner,
      name,
      description,
      defaultBranch,
      git,
      createdAt: now,
      pushedAt: now,
      collaborators: new Map(),
      labels: new Map(
        DEFAULT_LABELS.map(([name, color, description]) => [
          name,
          { id: this.nextId(), name, color, description, default: true },
        ]),
      ),
      nextNumber: 1,
      topics: [],
      visibility: 'public',
      allowAutoMerge: false,
      protections: new Map(),
      rulesets: [],
    };
    this.repos.set(`${owner.login}/${name}`.toLowerCase(), repo);
    this.pulls.set(repo.id, []);
    return repo;
  }

  repo(owner: string, name: string): SandboxRepo | undefined {
    return this.repos.get(`${owner}/${name}`.toLowerCase());
  }

  /** Renames a repository; its former name keeps answering with redirects, as on GitHub. */
  renameRepo(repo: SandboxRepo, name: string): void {
    const former = `${repo.owner.login}/${repo.name}`.toLowerCase();
    this.repos.delete(former);
    this.formerNames.set(former, repo.id);
    repo.name = name;
    const current = `${repo.owner.login}/${name}`.toLowerCase();
    this.formerNames.delete(current);
    this.repos.set(current, repo);
  }

  issuesOf(repo: SandboxRepo): SandboxIssue[] {
    let issues = this.issues.get(repo.id);
    if (!issues) {
      issues = [];
      this.issues.set(repo.id, issues);
    }
    return issues;
  }

  repoById(id: number): SandboxRepo | undefined {
    return [...this.repos.values()].find((repo) => repo.id === id);
  }

  /** The App's installation on an account, if the App is installed there. */
  installationFor(account: SandboxUser): SandboxInstallation | undefined {
    return [...this.installations.values()].find((i) => i.account.id === account.id);
  }

  /** The installation that covers a repository, if any. */
  installationForRepo(repo: SandboxRepo): SandboxInstallation | undefined {
    return [...this.installations.values()].find((i) => i.repositoryIds.has(repo.id));
  }

  createInstallation(account: SandboxUser): SandboxInstallation {
    const installation: SandboxInstallation = {
      id: nextInstallationId(),
      account,
      repositoryIds: new Set(),
      createdAt: this.clock(),
    };
    this.installations.set(installation.id, installation);
    return installation;
  }

  /** Issues a one-hour installation access token (`ghs_…`), optionally limited to some repositories. */
  issueInstallationToken(
    installation: SandboxInstallation,
    repositoryIds: Set<number> | null = null,
  ): InstallationToken {
    const token: InstallationToken = {
      token: `ghs_${randomToken()}`,
      installationId: installation.id,
      expiresAt: new Date(this.clock().getTime() + 60 * 60 * 1000),
      repositoryIds,
    };
    this.installationTokens.set(token.token, token);
    return token;
  }

  pullsOf(repo: SandboxRepo): SandboxPull[] {
    return this.pulls.get(repo.id) ?? [];
  }

  pull(repo: SandboxRepo, number: number): SandboxPull | undefined {
    return this.pullsOf(repo).find((pull) => pull.number === number);
  }
}

/** The labels GitHub gives every new repository (as the labels recording of @octokit/fixtures lists them). */
const DEFAULT_LABELS: [string, string, string][] = [
  ['bug', 'd73a4a', "Something isn't working"],
  ['documentation', '0075ca', 'Improvements or additions to documentation'],
  ['duplicate', 'cfd3d7', 'This issue or pull request already exists'],
  ['enhancement', 'a2eeef', 'New feature or request'],
  ['good first issue', '7057ff', 'Good for newcomers'],
  ['help wanted', '008672', 'Extra attention is needed'],
  ['invalid', 'e4e669', "This doesn't seem right"],
  ['question', 'd876e3', 'Further information is requested'],
  ['wontfix', 'ffffff', 'This will not be worked on'],
];

/** 36 characters from [A-Za-z0-9], the length GitHub's tokens carry after their prefix. */
function randomToken(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(36)].map((byte) => alphabet[byte % alphabet.length]).join('');
}
