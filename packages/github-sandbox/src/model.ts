import type { KeyObject } from 'node:crypto';
import type { GitRepository } from './git.js';

/** Repository permission as GitHub's collaborator API reports it. */
export type Permission = 'admin' | 'maintain' | 'write' | 'triage' | 'read';

/** A user, bot or organization account. */
export interface SandboxUser {
  id: number;
  login: string;
  type: 'User' | 'Bot' | 'Organization';
  name: string;
  email: string;
  createdAt: Date;
}

/** An organization team that can be requested as a reviewer (`@org/slug`). */
export interface SandboxTeam {
  id: number;
  org: string;
  slug: string;
  name: string;
}

/** The one GitHub App registered on the simulator. */
export interface SandboxApp {
  id: number;
  slug: string;
  name: string;
  clientId: string;
  owner: SandboxUser;
  /** The `<slug>[bot]` user that App writes are attributed to. */
  bot: SandboxUser;
  publicKey: KeyObject;
  webhookSecret: string;
  /** Where webhooks go; null until the App's URL is known (deliveries are logged as failed). */
  webhookUrl: string | null;
  permissions: Record<string, string>;
  events: string[];
  createdAt: Date;
}

export interface SandboxInstallation {
  id: number;
  account: SandboxUser;
  repositoryIds: Set<number>;
  createdAt: Date;
}

export interface SandboxLabel {
  id: number;
  name: string;
  color: string;
  description: string | null;
  /** One of the labels GitHub gives every new repository (`bug`, `documentation`, …). */
  default: boolean;
}

/** What an issue number names: an issue, or a pull request (its issue side). */
export type IssueRecord = SandboxIssue | SandboxPull;

/** Whether an issue number names a pull request. */
export function isPull(record: IssueRecord): record is SandboxPull {
  return 'headRef' in record;
}

/** Why a conversation was locked (`PUT /issues/{n}/lock`). */
export type LockReason = 'off-topic' | 'too heated' | 'resolved' | 'spam';

/** An issue that is not a pull request (pull requests keep their issue side in `SandboxPull`). */
export interface SandboxIssue {
  id: number;
  number: number;
  repoId: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  stateReason: 'completed' | 'not_planned' | 'reopened' | 'duplicate' | null;
  user: SandboxUser;
  labels: string[];
  assignees: SandboxUser[];
  locked: boolean;
  activeLockReason: LockReason | null;
  createdAt: Date;
  updatedAt: Date;
  closedAt: Date | null;
  closedBy: SandboxUser | null;
  /** Pinned to the repository (GraphQL `pinIssue`); at most 3 per repository. */
  pinned?: boolean;
}

export interface SandboxRepo {
  id: number;
  owner: SandboxUser;
  name: string;
  description: string | null;
  defaultBranch: string;
  git: GitRepository;
  createdAt: Date;
  pushedAt: Date;
  /** login → permission; the owner (or an org's members) are admins implicitly. */
  collaborators: Map<string, Permission>;
  labels: Map<string, SandboxLabel>;
  /** Issues and pull requests share one number sequence, as on GitHub. */
  nextNumber: number;
  /** Repository topics (`topics` of the repository object). */
  topics: string[];
  /**
   * `public`, `private` or `internal`, as the repository object's `visibility` says it (and
   * `private` is true for the last two). A user without a permission on a repository that is not
   * public gets 404, as GitHub hides it; public is the default, as the sandbox's repositories were.
   */
  visibility: 'public' | 'private' | 'internal';
  /** The repository setting "Allow auto-merge" (`allow_auto_merge`), off by default as on GitHub. */
  allowAutoMerge: boolean;
  /** Classic branch protection by exact branch name. */
  protections: Map<string, SandboxProtection>;
  /** Repository rulesets, in creation order. */
  rulesets: SandboxRuleset[];
}

/** A status check a branch requires: by name, optionally only from one App (`app_id` / `integration_id`). */
export interface RequiredCheck {
  context: string;
  /** null: any App or commit status may satisfy it. */
  appId: number | null;
}

/** Classic branch protection (`PUT /branches/{branch}/protection`), as far as the simulator enforces it. */
export interface SandboxProtection {
  /** null when the protection does not require status checks. */
  requiredStatusChecks: { strict: boolean; checks: RequiredCheck[] } | null;
  /** Administrators are held to the protection too (otherwise they may merge past it). */
  enforceAdmins: boolean;
}

/** A repository ruleset on branches; only `required_status_checks` rules are simulated. */
export interface SandboxRuleset {
  id: number;
  name: string;
  enforcement: 'disabled' | 'active' | 'evaluate';
  /** `ref_name` patterns: `refs/heads/<glob>`, `~DEFAULT_BRANCH`, `~ALL`. */
  include: string[];
  exclude: string[];
  requiredStatusChecks: { strict: boolean; checks: RequiredCheck[]; doNotEnforceOnCreate: boolean } | null;
  createdAt: Date;
  updatedAt: Date;
}

export type CommitState = 'error' | 'failure' | 'pending' | 'success';

/** A commit status (`POST /statuses/{sha}`). */
export interface SandboxCommitStatus {
  id: number;
  repoId: number;
  sha: string;
  context: string;
  state: CommitState;
  description: string | null;
  targetUrl: string | null;
  creator: SandboxUser;
  /** Set when an App installation posted it: it then counts as coming from that App. */
  viaApp: boolean;
  createdAt: Date;
}

/** A deployment (`POST /repos/{owner}/{repo}/deployments`). */
export interface SandboxDeployment {
  id: number;
  repoId: number;
  sha: string;
  ref: string;
  task: string;
  payload: Record<string, unknown>;
  environment: string;
  originalEnvironment: string;
  description: string | null;
  transient: boolean;
  production: boolean;
  creator: SandboxUser;
  viaApp: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export type DeploymentState = 'error' | 'failure' | 'inactive' | 'in_progress' | 'queued' | 'pending' | 'success';

/** One status of a deployment, newest last. */
export interface SandboxDeploymentStatus {
  id: number;
  deploymentId: number;
  state: DeploymentState;
  description: string;
  environment: string;
  targetUrl: string;
  logUrl: string;
  environmentUrl: string;
  creator: SandboxUser;
  viaApp: boolean;
  createdAt: Date;
}

export interface SandboxPull {
  id: number;
  /** Every pull request is also an issue, with its own id. */
  issueId: number;
  number: number;
  repoId: number;
  title: string;
  body: string | null;
  state: 'open' | 'closed';
  draft: boolean;
  headRef: string;
  headSha: string;
  baseRef: string;
  /** Where the base branch stood when the pull request closed; open ones follow the branch. */
  closedBaseSha: string | null;
  user: SandboxUser;
  createdAt: Date;
  updatedAt: Date;
  closedAt: Date | null;
  mergedAt: Date | null;
  mergedBy: SandboxUser | null;
  /** The test merge commit while open; the real merge commit once merged. */
  mergeCommitSha: string | null;
  labels: string[];
  /** `PUT /issues/{n}/lock` on the pull request's issue side. */
  locked: boolean;
  activeLockReason: LockReason | null;
  requestedReviewers: string[];
  requestedTeams: string[];
  maintainerCanModify: boolean;
  /** Native auto-merge (`enablePullRequestAutoMerge`): merged by the simulator once every requirement is met. */
  autoMerge: {
    method: 'merge' | 'squash' | 'rebase';
    enabledBy: SandboxUser;
    enabledAt: Date;
    commitTitle: string;
    commitMessage: string;
  } | null;
}

export interface SandboxComment {
  id: number;
  repoId: number;
  issueNumber: number;
  body: string;
  user: SandboxUser;
  /** Set when an App installation wrote it (`performed_via_github_app`). */
  viaApp: boolean;
  createdAt: Date;
  updatedAt: Date;
}

export type CheckStatus = 'queued' | 'in_progress' | 'completed' | 'waiting' | 'requested' | 'pending';
export type CheckConclusion =
  'success' | 'failure' | 'neutral' | 'cancelled' | 'skipped' | 'timed_out' | 'action_required';

export interface SandboxCheckRun {
  id: number;
  suiteId: number;
  repoId: number;
  headSha: string;
  name: string;
  status: CheckStatus;
  conclusion: CheckConclusion | null;
  startedAt: Date | null;
  completedAt: Date | null;
  externalId: string | null;
  detailsUrl: string | null;
  output: { title: string | null; summary: string | null; text: string | null };
}

/** Who made a request: the App itself (JWT), one of its installations, or a user. */
export type Principal =
  | { kind: 'app' }
  | { kind: 'installation'; installation: SandboxInstallation; token: string }
  | { kind: 'user'; user: SandboxUser };
