import { RequestError } from '@octokit/request-error';
import { ConfigError, ConflictError } from '../../observability/errors.js';
import { decodeUtf8, DEFAULT_YAML_LIMITS, formatSize, notUtf8 } from '../../planners/yaml-guard.js';
import type { Octokit } from './client.js';

/** A repository as jobs name it. Job data carries these and the installation id, never a token. */
export interface RepoId {
  owner: string;
  repo: string;
}

export interface BranchHead {
  sha: string;
  /** Its tree (when read from the commit; a head known from a pull request has none). */
  treeSha?: string;
  /** Who GitHub says wrote the head commit (when it was read from GitHub). */
  writer?: CommitWriter;
}

/**
 * Who wrote a commit, as GitHub attributes it: the accounts its author and committer emails belong
 * to, and whether GitHub verified its signature. Git metadata alone is forgeable by anyone who
 * pushes; an account attribution together with GitHub's verified signature is not.
 */
export interface CommitWriter {
  verified: boolean;
  author: string | null;
  committer: string | null;
}

type CommitAccounts = {
  author?: { login?: string } | Record<string, never> | null;
  committer?: { login?: string } | Record<string, never> | null;
  commit: { verification?: { verified?: boolean } | null };
};

function writerOf(data: CommitAccounts): CommitWriter {
  const login = (account: CommitAccounts['author']): string | null =>
    account && 'login' in account && typeof account.login === 'string' ? account.login : null;
  return {
    verified: data.commit.verification?.verified === true,
    author: login(data.author),
    committer: login(data.committer),
  };
}

export interface FileWrite {
  path: string;
  content: string;
}

function isStatus(error: unknown, ...statuses: number[]): error is RequestError {
  return error instanceof RequestError && statuses.includes(error.status);
}

export async function loadDefaultBranch(octokit: Octokit, id: RepoId): Promise<string> {
  const { data } = await octokit.rest.repos.get({ ...id });
  return data.default_branch;
}

/** How many changed files `loadBranch` asks for with `changes` (GitHub's largest page of commit files). */
export const HEAD_CHANGES_PAGE = 100;

/**
 * The branch's head commit and its tree in one call, or null when the branch does not exist.
 * `GET /repos/{o}/{r}/commits/heads/{branch}` resolves the branch and returns the tree SHA the
 * next commit needs; GitHub answers 422 (or 404) for a ref that does not exist.
 * With `changes`, the same answer also lists what the head commit changed against its first
 * parent (as `loadCommitChanges` reads it), when one page of {@link HEAD_CHANGES_PAGE} files holds
 * all of them; a longer list is left out (`loadCommitChanges` pages through it).
 */
export async function loadBranch(
  octokit: Octokit,
  id: RepoId,
  branch: string,
  options: { changes?: boolean } = {},
): Promise<(BranchHead & { treeSha: string; changes?: Omit<CommitChanges, 'truncated'> }) | null> {
  try {
    const { data } = await octokit.rest.repos.getCommit({
      ...id,
      ref: `heads/${branch}`,
      per_page: options.changes ? HEAD_CHANGES_PAGE : 1,
    });
    const head = { sha: data.sha, treeSha: data.commit.tree.sha, writer: writerOf(data) };
    const listed = data.files ?? [];
    if (!options.changes || listed.length >= HEAD_CHANGES_PAGE) return head;
    return {
      ...head,
      changes: { parents: data.parents.map((parent) => parent.sha), files: [...new Set(changedPaths(listed))].sort() },
    };
  } catch (error) {
    if (isStatus(error, 404, 422)) return null;
    throw error;
  }
}

/**
 * A file's text at a commit, or null when it is not there. A file that is not UTF-8 is a
 * `ConfigError`, never decoded with replacement characters that a bump would commit back. A file
 * over `maxBytes` is not downloaded: `ConfigError` says which file and how large (the planners
 * would refuse it anyway).
 * GitHub leaves the content of files over 1 MB out of the JSON answer; those are read raw
 * (`application/vnd.github.raw`), never as base64 JSON, which Octokit cannot parse past about 8 MB.
 */
export async function loadFile(
  octokit: Octokit,
  id: RepoId,
  path: string,
  ref: string,
  maxBytes = DEFAULT_YAML_LIMITS.maxBytes,
): Promise<string | null> {
  try {
    const { data } = await octokit.rest.repos.getContent({ ...id, path, ref });
    if (typeof data !== 'object' || data === null)
      throw new Error(`GitHub's answer for the contents of ${path} could not be read as JSON; retrying`);
    if (Array.isArray(data) || data.type !== 'file') return null;
    if (data.size > maxBytes) {
      throw new ConfigError(
        `${path} is ${formatSize(data.size)}, over the ${formatSize(maxBytes)} Escalator reads from one file; split it into smaller files, or keep it out of the environment's paths`,
      );
    }
    const content = 'content' in data && typeof data.content === 'string' ? data.content : '';
    if (data.encoding === 'base64') {
      const decoded = decodeUtf8(Buffer.from(content, 'base64'));
      if ('problem' in decoded) throw new ConfigError(`${path}: ${decoded.problem}`);
      return decoded.text;
    }
    if (data.encoding === 'none' || (content === '' && data.size > 0)) {
      const raw = await octokit.rest.repos.getContent({ ...id, path, ref, mediaType: { format: 'raw' } });
      if (typeof raw.data !== 'string')
        throw new Error(`GitHub did not answer the raw contents of ${path} as text; retrying`);
      // Octokit decodes raw answers leniently; valid UTF-8 encodes back to exactly its size.
      if (Buffer.byteLength(raw.data) !== data.size) throw new ConfigError(`${path}: ${notUtf8()}`);
      return raw.data;
    }
    return content;
  } catch (error) {
    if (isStatus(error, 404)) return null;
    throw error;
  }
}

/** Every file of a tree (recursive): path → blob SHA. */
export async function loadTree(octokit: Octokit, id: RepoId, treeSha: string): Promise<Map<string, string>> {
  const { data } = await octokit.rest.git.getTree({ ...id, tree_sha: treeSha, recursive: 'true' });
  // Octokit hands back the text when it cannot parse it (its JSON parser overflows past about 8 MB).
  if (typeof data !== 'object' || data === null)
    throw new ConfigError(
      `the tree of ${id.owner}/${id.repo} is too large for Escalator to read in one listing (${formatSize(String(data).length)} of JSON); keep the GitOps repository to fewer files`,
    );
  if (data.truncated)
    throw new Error(
      `the tree of ${id.owner}/${id.repo} is too large for one listing (GitHub truncated it); list fewer paths in .github/escalator.yml`,
    );
  return new Map(
    data.tree
      .filter((entry) => entry.type === 'blob' && entry.path && entry.sha)
      .map((entry) => [entry.path as string, entry.sha as string]),
  );
}

const COMMIT_ON_BRANCH = `mutation ($input: CreateCommitOnBranchInput!) {
  createCommitOnBranch(input: $input) { commit { oid } }
}`;

/** A GraphQL answer with errors, as Octokit throws it (not an HTTP error). */
export interface GraphqlFailure extends Error {
  errors: Array<{ type?: string; message?: string }>;
}

export function isGraphqlError(error: unknown): error is GraphqlFailure {
  return (
    error instanceof Error &&
    Array.isArray((error as Partial<GraphqlFailure>).errors) &&
    !(error instanceof RequestError)
  );
}

/**
 * One commit with every file of a plan on top of `branch`, and the branch moved to it, in one call:
 * GraphQL `createCommitOnBranch` (https://docs.github.com/en/graphql/reference/mutations#createcommitonbranch).
 * Compare-and-swap on `expectedHead`: GitHub refuses with `STALE_DATA` when the branch moved, and
 * a branch deleted meanwhile is `NOT_FOUND`; both are a `ConflictError` (plan again from fresh
 * state). GitHub signs the commit and attributes it to the App's bot, which is what lets a later
 * run judge the branch as Escalator's (`src/jobs/shared/living-pull.ts`). The branch must exist.
 */
export async function commitOnBranch(
  octokit: Octokit,
  id: RepoId,
  branch: string,
  expectedHead: string,
  files: FileWrite[],
  message: string,
  /** Paths to delete in the same commit. */
  deletions: readonly string[] = [],
): Promise<string> {
  const [headline = '', ...rest] = message.split('\n');
  const body = rest.join('\n').trim();
  try {
    const answer = await octokit.graphql<{ createCommitOnBranch: { commit: { oid: string } } }>(COMMIT_ON_BRANCH, {
      input: {
        branch: { repositoryNameWithOwner: `${id.owner}/${id.repo}`, branchName: branch },
        message: { headline, ...(body ? { body } : {}) },
        fileChanges: {
          additions: files.map((file) => ({ path: file.path, contents: Buffer.from(file.content).toString('base64') })),
          ...(deletions.length > 0 ? { deletions: deletions.map((path) => ({ path })) } : {}),
        },
        expectedHeadOid: expectedHead,
      },
    });
    return answer.createCommitOnBranch.commit.oid;
  } catch (error) {
    if (
      isGraphqlError(error) &&
      error.errors.some((entry) => entry.type === 'STALE_DATA' || entry.type === 'NOT_FOUND')
    )
      throw new ConflictError(
        `branch ${branch} moved or went away while Escalator was writing it (${error.errors.map((entry) => entry.message ?? '').join('; ')})`,
      );
    throw error;
  }
}

/** Create a branch; `ConflictError` when it exists (someone else got there first). */
export async function createBranch(octokit: Octokit, id: RepoId, branch: string, sha: string): Promise<void> {
  try {
    await octokit.rest.git.createRef({ ...id, ref: `refs/heads/${branch}`, sha });
  } catch (error) {
    if (isStatus(error, 422)) throw new ConflictError(`branch ${branch} already exists`);
    throw error;
  }
}

export interface PullSummary {
  number: number;
  title: string;
  body: string;
  headSha: string;
  htmlUrl: string;
  /** GraphQL id (`node_id`), for native auto-merge. */
  nodeId: string;
  labels: string[];
  /** Who opened it. */
  user: { login: string; type: string } | null;
}

/** The open pull request whose head is `branch` in the same repository, if any. */
export async function findOpenPull(
  octokit: Octokit,
  id: RepoId,
  branch: string,
  base?: string,
): Promise<PullSummary | null> {
  const { data } = await octokit.rest.pulls.list({
    ...id,
    state: 'open',
    head: `${id.owner}:${branch}`,
    ...(base ? { base } : {}),
    per_page: 10,
  });
  const pull = data[0];
  return pull ? summarize(pull) : null;
}

function summarize(pull: {
  number: number;
  title: string;
  body?: string | null;
  head: { sha: string };
  html_url: string;
  node_id: string;
  labels?: Array<{ name?: string } | string>;
  user?: { login: string; type: string } | null;
}): PullSummary {
  return {
    user: pull.user ? { login: pull.user.login, type: pull.user.type } : null,
    number: pull.number,
    title: pull.title,
    body: pull.body ?? '',
    headSha: pull.head.sha,
    htmlUrl: pull.html_url,
    nodeId: pull.node_id,
    labels: (pull.labels ?? []).map((label) => (typeof label === 'string' ? label : (label.name ?? ''))),
  };
}

/**
 * Pull request `number` when it is open with its head on `branch` of this repository; null when it
 * was merged, closed, or is not there. One conditional read (a 304 when nothing changed).
 */
export async function loadOpenPull(
  octokit: Octokit,
  id: RepoId,
  number: number,
  branch: string,
): Promise<PullSummary | null> {
  try {
    const { data } = await octokit.rest.pulls.get({ ...id, pull_number: number });
    const sameRepo = data.head.repo?.full_name.toLowerCase() === `${id.owner}/${id.repo}`.toLowerCase();
    return data.state === 'open' && data.head.ref === branch && sameRepo ? summarize(data) : null;
  } catch (error) {
    if (isStatus(error, 404)) return null;
    throw error;
  }
}

export async function createPull(
  octokit: Octokit,
  id: RepoId,
  input: { head: string; base: string; title: string; body: string },
): Promise<PullSummary> {
  const { data } = await octokit.rest.pulls.create({ ...id, ...input });
  return summarize(data);
}

/** Update title and body only when they differ: an empty change makes no API write. */
export async function ensurePullText(
  octokit: Octokit,
  id: RepoId,
  pull: PullSummary,
  text: { title: string; body: string },
): Promise<boolean> {
  if (pull.title === text.title && pull.body === text.body) return false;
  const { data } = await octokit.rest.pulls.update({
    ...id,
    pull_number: pull.number,
    title: text.title,
    body: text.body,
  });
  if (data.state !== 'open') {
    // Merged or closed since it was read: it keeps describing what it held, and the caller plans again.
    await octokit.rest.pulls.update({ ...id, pull_number: pull.number, title: pull.title, body: pull.body });
    throw closedMeanwhile(pull.number, data.merged_at);
  }
  return true;
}

/** `ConflictError` when the pull request was merged or closed since it was read. */
export async function ensurePullOpen(octokit: Octokit, id: RepoId, number: number): Promise<void> {
  const { data } = await octokit.rest.pulls.get({ ...id, pull_number: number });
  if (data.state !== 'open') throw closedMeanwhile(number, data.merged_at);
}

function closedMeanwhile(number: number, mergedAt: string | null): ConflictError {
  return new ConflictError(
    `pull request #${number} was ${mergedAt ? 'merged' : 'closed'} while Escalator was updating it`,
  );
}

export async function ensureLabels(
  octokit: Octokit,
  id: RepoId,
  number: number,
  have: string[],
  want: string[],
): Promise<void> {
  const missing = want.filter((label) => !have.includes(label));
  if (missing.length > 0) await octokit.rest.issues.addLabels({ ...id, issue_number: number, labels: missing });
}

/** Reset a branch Escalator owns (no open pull request uses it) onto a fresh commit. */
export async function resetBranch(octokit: Octokit, id: RepoId, branch: string, sha: string): Promise<void> {
  await octokit.rest.git.updateRef({ ...id, ref: `heads/${branch}`, sha, force: true });
}

export type MergeOutcome = 'merged' | 'not-mergeable' | 'head-moved';

/** Merge a pull request at exactly `sha`; GitHub refuses when the head moved (409) or it cannot merge (405). */
export async function mergePull(
  octokit: Octokit,
  id: RepoId,
  number: number,
  sha: string,
  method: 'merge' | 'squash' | 'rebase' = 'squash',
): Promise<MergeOutcome> {
  try {
    await octokit.rest.pulls.merge({ ...id, pull_number: number, sha, merge_method: method });
    return 'merged';
  } catch (error) {
    if (isStatus(error, 405)) return 'not-mergeable';
    if (isStatus(error, 409)) return 'head-moved';
    throw error;
  }
}

/** A finished check run on a commit: how problems that have no pull request become visible. */
export async function reportCheck(
  octokit: Octokit,
  id: RepoId,
  input: { sha: string; name: string; conclusion: 'success' | 'failure' | 'neutral'; title: string; summary: string },
): Promise<void> {
  await octokit.rest.checks.create({
    ...id,
    head_sha: input.sha,
    name: input.name,
    status: 'completed',
    conclusion: input.conclusion,
    output: { title: input.title.slice(0, 255), summary: input.summary.slice(0, 65_000) },
  });
}

export interface CheckState {
  status: 'in_progress' | 'completed';
  conclusion?: 'success' | 'failure' | 'neutral';
  title: string;
  summary: string;
}

/**
 * The check run of `name` on `sha` in `state`, written only when its state or text differs.
 * Re-evaluating a gate never piles up check runs: a run still in progress is updated in place, and
 * so is the text of a completed one. A completed run is never moved: GitHub keeps a completed check
 * run's status and conclusion for good (an update asking for `in_progress` answers 200 and changes
 * nothing: GitHub staff in github.com/orgs/community/discussions/24761, quoted in
 * taskcluster/taskcluster#5085; tektoncd/pipelines-as-code#998), so a gate that goes back to
 * pending, or from one conclusion to another, gets a new run of the same name, as Mergify
 * (Mergifyio/mergify#1989) and Atlantis (lyft/atlantis#265) do. Required checks, auto-merge and
 * the pull request's checks read the newest run of a name (docs/gates.md). `fresh`: `sha` is a
 * commit the caller has just written under its repository lease, so no check run of Escalator's
 * is on it yet and none is looked for.
 */
export async function ensureCheckRun(
  octokit: Octokit,
  id: RepoId,
  sha: string,
  name: string,
  state: CheckState,
  options: { fresh?: boolean } = {},
): Promise<number> {
  const existing = options.fresh
    ? undefined
    : newestRun(
        (await octokit.rest.checks.listForRef({ ...id, ref: sha, check_name: name, per_page: 10 })).data.check_runs,
        name,
        sha,
      );
  const output = { title: state.title.slice(0, 255), summary: state.summary.slice(0, 65_000) };
  const fields = {
    status: state.status,
    ...(state.status === 'completed' ? { conclusion: state.conclusion ?? 'neutral' } : {}),
    output,
  };
  const verdict = (run: { status: string; conclusion?: string | null }) =>
    run.status === 'completed' ? `completed:${run.conclusion ?? ''}` : 'open';
  const wanted = state.status === 'completed' ? `completed:${state.conclusion ?? 'neutral'}` : 'open';
  if (!existing || (existing.status === 'completed' && verdict(existing) !== wanted)) {
    const created = await octokit.rest.checks.create({ ...id, head_sha: sha, name, ...fields });
    return created.data.id;
  }
  const same =
    existing.status === state.status &&
    verdict(existing) === wanted &&
    existing.output?.title === output.title &&
    existing.output?.summary === output.summary;
  if (!same) await octokit.rest.checks.update({ ...id, check_run_id: existing.id, ...fields });
  return existing.id;
}

/**
 * The newest run of `name` on `sha`: the highest id, since GitHub numbers check runs in the order
 * they are created and does not promise the order of a list (palantir/policy-bot#821 read an older
 * run of a name that `filter=latest` listed too).
 */
export function newestRun<R extends { id: number; name: string; head_sha: string }>(
  runs: readonly R[],
  name: string,
  sha: string,
): R | undefined {
  let newest: R | undefined;
  for (const run of runs)
    if (run.name === name && run.head_sha === sha && (!newest || run.id > newest.id)) newest = run;
  return newest;
}

export async function closePull(octokit: Octokit, id: RepoId, number: number, comment: string): Promise<void> {
  await octokit.rest.issues.createComment({ ...id, issue_number: number, body: comment });
  await octokit.rest.pulls.update({ ...id, pull_number: number, state: 'closed' });
}

/** Ask users and teams (`@org/team`) to review; GitHub ignores ones already requested. */
export async function requestReviewers(
  octokit: Octokit,
  id: RepoId,
  number: number,
  reviewers: string[],
): Promise<void> {
  const teams = reviewers.filter((r) => r.includes('/')).map((r) => r.split('/')[1] as string);
  const users = reviewers.filter((r) => !r.includes('/')).map((r) => r.replace(/^@/, ''));
  if (teams.length + users.length === 0) return;
  await octokit.rest.pulls.requestReviewers({ ...id, pull_number: number, reviewers: users, team_reviewers: teams });
}

/** The commits of a pull request, oldest first, with who wrote each (GitHub lists at most 250). */
export async function loadPullCommits(
  octokit: Octokit,
  id: RepoId,
  number: number,
): Promise<Array<CommitWriter & { sha: string }>> {
  // Page by page rather than `octokit.paginate`, whose follow-up requests carry full URLs instead
  // of route templates into the per-route metrics.
  const commits: Array<CommitWriter & { sha: string }> = [];
  for (let page = 1; page <= 3; page++) {
    const { data } = await octokit.rest.pulls.listCommits({ ...id, pull_number: number, per_page: 100, page });
    commits.push(...data.map((commit) => ({ sha: commit.sha, ...writerOf(commit) })));
    if (data.length < 100) break;
  }
  return commits;
}

const botLogins = new WeakMap<Octokit, Promise<string>>();

/**
 * The login of this App's bot user (`<slug>[bot]`), which GitHub attributes the App's pull requests,
 * comments and commits to. One `GET /app` per client and process (Octokit's App auth signs that
 * route with the App's JWT even on an installation client); a failure is not cached.
 */
export function loadBotLogin(octokit: Octokit): Promise<string> {
  let login = botLogins.get(octokit);
  if (!login) {
    login = octokit.rest.apps.getAuthenticated().then(({ data }) => {
      if (!data?.slug)
        throw new Error('GitHub did not say which App Escalator is (GET /app answered no slug); retrying');
      return `${data.slug}[bot]`;
    });
    login.catch(() => botLogins.delete(octokit));
    botLogins.set(octokit, login);
  }
  return login;
}

/** True when `login` already wrote a comment starting with `marker` on the issue or pull request. */
export async function hasComment(
  octokit: Octokit,
  id: RepoId,
  number: number,
  marker: string,
  login: string,
): Promise<boolean> {
  for (let page = 1; ; page++) {
    const { data } = await octokit.rest.issues.listComments({ ...id, issue_number: number, per_page: 100, page });
    if (data.some((comment) => comment.user?.login === login && (comment.body ?? '').startsWith(marker))) return true;
    if (data.length < 100) return false;
  }
}

export async function createComment(octokit: Octokit, id: RepoId, number: number, body: string): Promise<void> {
  await octokit.rest.issues.createComment({ ...id, issue_number: number, body });
}

/** The files changed between two commits (first page of the compare API: at most 300 files, which callers treat as "maybe more"). */
export async function loadComparedFiles(
  octokit: Octokit,
  id: RepoId,
  before: string,
  after: string,
): Promise<Array<{ filename: string; previous_filename?: string }>> {
  const { data } = await octokit.rest.repos.compareCommitsWithBasehead({
    owner: id.owner,
    repo: id.repo,
    basehead: `${before}...${after}`,
    per_page: 1,
  });
  return data.files ?? [];
}

/** A pull request as GitHub holds it now. */
export async function loadPull(octokit: Octokit, id: RepoId, number: number) {
  const { data } = await octokit.rest.pulls.get({ ...id, pull_number: number });
  return data;
}

/** Every comment of an issue or pull request, oldest first (page by page: each request keeps its route template). */
export async function listComments(octokit: Octokit, id: RepoId, number: number) {
  const comments = [];
  for (let page = 1; ; page++) {
    const { data } = await octokit.rest.issues.listComments({ ...id, issue_number: number, per_page: 100, page });
    comments.push(...data);
    if (data.length < 100) return comments;
  }
}

export async function updateComment(octokit: Octokit, id: RepoId, commentId: number, body: string): Promise<void> {
  await octokit.rest.issues.updateComment({ ...id, comment_id: commentId, body });
}

/** A user's permission on the repository (`admin`, `write`, `read`, `none`…); `none` when GitHub does not know the user there. */
export async function loadPermission(octokit: Octokit, id: RepoId, username: string): Promise<string> {
  return (await loadAccess(octokit, id, username)).permission;
}

/**
 * A user's access to the repository: `permission` is GitHub's base role (`admin`, `write`, `read`,
 * `none`: `maintain` reads as `write` there), and `maintainer` whether the role is `maintain` or
 * `admin`, custom roles built on them included (`role_name`, `user.permissions.maintain`; "Get
 * repository permissions for a user" in GitHub's REST docs).
 */
export async function loadAccess(
  octokit: Octokit,
  id: RepoId,
  username: string,
): Promise<{ permission: string; maintainer: boolean }> {
  try {
    const { data } = await octokit.rest.repos.getCollaboratorPermissionLevel({ ...id, username });
    const maintainer =
      data.permission === 'admin' ||
      data.role_name === 'maintain' ||
      data.user?.permissions?.maintain === true ||
      data.user?.permissions?.admin === true;
    return { permission: data.permission, maintainer };
  } catch (error) {
    if (error instanceof RequestError && error.status === 404) return { permission: 'none', maintainer: false };
    throw error;
  }
}

/**
 * Whether commit `head` contains commit `base` (the compare API says `ahead` or `identical`).
 * A commit GitHub does not know (404) contains nothing; the answer never changes, so callers cache it.
 */
export async function commitContains(octokit: Octokit, id: RepoId, base: string, head: string): Promise<boolean> {
  if (base === head) return true;
  try {
    const { data } = await octokit.rest.repos.compareCommitsWithBasehead({
      owner: id.owner,
      repo: id.repo,
      basehead: `${base}...${head}`,
      per_page: 1,
    });
    return data.status === 'ahead' || data.status === 'identical';
  } catch (error) {
    if (error instanceof RequestError && (error.status === 404 || error.status === 422)) return false;
    throw error;
  }
}

/** The paths of a page of a commit's files: a rename is both of its paths. */
function changedPaths(files: ReadonlyArray<{ filename: string; previous_filename?: string }>): string[] {
  return files.flatMap((file) => (file.previous_filename ? [file.filename, file.previous_filename] : [file.filename]));
}

/** What a commit changed against its first parent, and its parents. */
export interface CommitChanges {
  parents: string[];
  /** Paths added, modified or removed (a rename is both of its paths). */
  files: string[];
  /** GitHub lists at most 3,000 files of a commit: true when the list may be cut there. */
  truncated: boolean;
}

/**
 * What commit `sha` changed against its first parent (`GET /repos/{o}/{r}/commits/{sha}`, which
 * lists the files page by page, at most 3,000;
 * https://docs.github.com/en/rest/commits/commits#get-a-commit): for a merge commit, what the
 * merge brought into the branch.
 */
export async function loadCommitChanges(octokit: Octokit, id: RepoId, sha: string): Promise<CommitChanges> {
  const files = new Set<string>();
  let parents: string[] = [];
  const perPage = HEAD_CHANGES_PAGE;
  for (let page = 1; page <= 30; page++) {
    const { data } = await octokit.rest.repos.getCommit({ ...id, ref: sha, per_page: perPage, page });
    parents = data.parents.map((parent) => parent.sha);
    const before = files.size;
    for (const path of changedPaths(data.files ?? [])) files.add(path);
    // A short page is the last; so is one that adds nothing new (a server that does not page files).
    if ((data.files ?? []).length < perPage || files.size === before)
      return { parents, files: [...files].sort(), truncated: false };
  }
  return { parents, files: [...files].sort(), truncated: true };
}
