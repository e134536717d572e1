import { readdir, readFile } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import { withRepoLock, type SandboxContext } from './context.js';
import { emitInstallation, emitInstallationRepositories } from './events.js';
import { ZERO_SHA } from './git.js';
import { HttpError, validationFailed } from './http.js';
import type { Permission, SandboxRepo, SandboxUser } from './model.js';
import { afterRefUpdate } from './refs.js';
import { buildTree, type TreeChange } from './trees.js';

/** File contents by path; `null` deletes the path. */
export type FileMap = Record<string, string | Buffer | null>;

/** What to create: files from a folder on disk and/or given inline, on one initial commit. */
export interface NewRepository {
  owner: string;
  name: string;
  /** Folder whose files (`.git` excluded) become the first commit. */
  folder?: string;
  files?: FileMap;
  defaultBranch?: string;
  description?: string | null;
  /** Install the App on it (default true): sends `installation` or `installation_repositories`. */
  install?: boolean;
  collaborators?: Record<string, Permission>;
  /** Teams of the owning organization that can be requested as reviewers. */
  teams?: string[];
  topics?: string[];
  /** @default public */
  visibility?: 'public' | 'private' | 'internal';
}

/** Reads every file below `folder` (skipping `.git`), with `/`-separated relative paths. */
export async function readFolder(folder: string): Promise<FileMap> {
  const files: FileMap = {};
  const walk = async (dir: string): Promise<void> => {
    for (const entry of await readdir(dir, { withFileTypes: true })) {
      if (entry.name === '.git') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) await walk(path);
      else if (entry.isFile()) files[relative(folder, path).split(sep).join('/')] = await readFile(path);
    }
  };
  await walk(folder);
  return files;
}

/**
 * Creates a repository owned by a user or organization (created when unknown), seeds it
 * with one commit as `creator`, and installs the App on it unless `install` is false.
 */
export async function createRepository(
  context: SandboxContext,
  creator: SandboxUser,
  input: NewRepository,
): Promise<SandboxRepo> {
  const { state } = context;
  if (state.repo(input.owner, input.name))
    throw new HttpError(422, `Repository ${input.owner}/${input.name} already exists.`);
  const owner = state.user(input.owner) ?? state.createUser(input.owner, 'Organization');
  const repo = await state.createRepo(owner, input.name, input.defaultBranch ?? 'main', input.description ?? null);
  if (owner.id !== creator.id) repo.collaborators.set(creator.login.toLowerCase(), 'admin');
  for (const [login, permission] of Object.entries(input.collaborators ?? {})) {
    repo.collaborators.set(state.createUser(login).login.toLowerCase(), permission);
  }
  for (const slug of input.teams ?? []) state.createTeam(owner.login, slug);
  repo.topics = [...(input.topics ?? [])];
  repo.visibility = input.visibility ?? 'public';
  const files = { ...(input.folder ? await readFolder(input.folder) : {}), ...input.files };
  if (Object.keys(files).length) {
    await commitFiles(context, repo, creator, { branch: repo.defaultBranch, message: 'Initial commit', files });
  }
  if (input.install !== false) installApp(context, repo, creator);
  return repo;
}

/**
 * Renames a repository as `PATCH /repos/{owner}/{repo}` with `name` does. The former name keeps
 * answering with redirects to `/repositories/{id}` (the rename-repository recording).
 */
export function renameRepository(context: SandboxContext, repo: SandboxRepo, name: string): void {
  if (name === repo.name) return;
  if (!/^[A-Za-z0-9._-]{1,100}$/.test(name) || name === '.' || name === '..')
    throw validationFailed([{ resource: 'Repository', code: 'custom', field: 'name', message: 'name is invalid' }]);
  const taken = context.state.repo(repo.owner.login, name);
  if (taken && taken.id !== repo.id)
    throw validationFailed([
      { resource: 'Repository', code: 'custom', field: 'name', message: 'name already exists on this account' },
    ]);
  context.state.renameRepo(repo, name);
}

/** Adds a repository to the App's installation on its owner, creating the installation if needed. */
export function installApp(context: SandboxContext, repo: SandboxRepo, sender: SandboxUser): void {
  const existing = context.state.installationFor(repo.owner);
  if (existing?.repositoryIds.has(repo.id)) return;
  if (existing) {
    existing.repositoryIds.add(repo.id);
    emitInstallationRepositories(context, existing, { added: [repo], removed: [] }, sender);
    return;
  }
  const installation = context.state.createInstallation(repo.owner);
  installation.repositoryIds.add(repo.id);
  emitInstallation(context, installation, [repo], sender);
}

/** The branch is not where the caller expected it (GraphQL `STALE_DATA`). */
export class StaleBranchError extends HttpError {
  constructor(readonly expected: string) {
    super(409, `Expected branch to point to "${expected}" but it did not.  Pull and try again.`);
    this.name = 'StaleBranchError';
  }
}

export interface CommitFilesInput {
  branch: string;
  message: string;
  files: FileMap;
  /** Where a new branch starts; default the default branch. */
  from?: string;
  /** Compare-and-swap: fail with {@link StaleBranchError} unless the branch is at this commit. */
  expectedHead?: string;
  /** GitHub signs the commit (App commits through `createCommitOnBranch`). */
  verified?: boolean;
}

/**
 * Commits files to a branch as `author` and moves the branch like a `git push` would
 * (creating it from `from`, default the default branch, when it does not exist yet).
 * Sends `push` and, for pull requests on that branch, `synchronize`.
 */
export function commitFiles(
  context: SandboxContext,
  repo: SandboxRepo,
  author: SandboxUser,
  input: CommitFilesInput,
): Promise<{ sha: string; before: string }> {
  return withRepoLock(context, repo, async () => {
    const ref = `refs/heads/${input.branch}`;
    const current = await repo.git.readRef(ref);
    if (input.expectedHead !== undefined && input.expectedHead !== current)
      throw new StaleBranchError(input.expectedHead);
    const parent = current ?? (await repo.git.resolveCommit(input.from ?? repo.defaultBranch));
    if (!current && input.from && !parent) throw new HttpError(422, `Branch ${input.from} does not exist.`);
    const changes: TreeChange[] = [];
    for (const [path, content] of Object.entries(input.files)) {
      const sha =
        content === null
          ? null
          : await repo.git.writeBlob(typeof content === 'string' ? Buffer.from(content, 'utf8') : content);
      changes.push({ path, mode: '100644', type: 'blob', sha });
    }
    const tree = await buildTree(repo.git, parent ? await repo.git.resolveTree(parent) : null, changes);
    const identity = { name: author.name, email: author.email, date: context.state.clock() };
    const sha = await repo.git.commitTree(tree, parent ? [parent] : [], `${input.message}\n`, identity, identity);
    if (input.verified) context.verifiedCommits.add(sha);
    const before = current ?? ZERO_SHA;
    if (!(await repo.git.updateRef(ref, sha, before)))
      throw new HttpError(409, `Branch ${input.branch} moved while committing; try again.`);
    await afterRefUpdate(context, repo, { ref, before, after: sha, pusher: author });
    return { sha, before };
  });
}
