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
      labels: new Map(),
      nextNumber: 1,
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
      id: this.nextId(),
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

/** 36 characters from [A-Za-z0-9], the length GitHub's tokens carry after their prefix. */
function randomToken(): string {
  const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
  return [...randomBytes(36)].map((byte) => alphabet[byte % alphabet.length]).join('');
}
