import type { CommitObject, FileChange, GitIdentity, TreeEntry } from '../git.js';
import type { SandboxUser } from '../model.js';
import { isoTime, nodeId, type Urls } from '../urls.js';
import { userShape } from './users.js';

/**
 * Commit signature state. App commits made through the API without a custom author are
 * signed by GitHub ("web-flow") and reported as verified; the simulator does the same for them.
 */
export function verificationShape(verified: boolean): Record<string, unknown> {
  return verified
    ? { verified: true, reason: 'valid', signature: null, payload: null, verified_at: null }
    : { verified: false, reason: 'unsigned', signature: null, payload: null, verified_at: null };
}

function gitUser(identity: GitIdentity): Record<string, unknown> {
  return { name: identity.name, email: identity.email, date: isoTime(identity.date) };
}

/** `git-commit` (`/git/commits`). */
export function gitCommitShape(
  urls: Urls,
  fullName: string,
  commit: CommitObject,
  verified: boolean,
): Record<string, unknown> {
  return {
    sha: commit.sha,
    node_id: nodeId('Commit', commit.sha),
    url: urls.repoApi(fullName, `/git/commits/${commit.sha}`),
    html_url: urls.repoHtml(fullName, `/commit/${commit.sha}`),
    author: gitUser(commit.author),
    committer: gitUser(commit.committer),
    tree: { sha: commit.tree, url: urls.repoApi(fullName, `/git/trees/${commit.tree}`) },
    message: commit.message.replace(/\n$/, ''),
    parents: commit.parents.map((sha) => ({
      sha,
      url: urls.repoApi(fullName, `/git/commits/${sha}`),
      html_url: urls.repoHtml(fullName, `/commit/${sha}`),
    })),
    verification: verificationShape(verified),
  };
}

/**
 * `commit` (`/commits/{ref}`, compare, pull commits): the git commit plus the GitHub accounts
 * whose emails wrote it (an empty object when no account matches, as on GitHub).
 */
export function commitShape(
  urls: Urls,
  fullName: string,
  commit: CommitObject,
  options: {
    verified: boolean;
    userByEmail: (email: string) => SandboxUser | undefined;
    files?: Record<string, unknown>[];
  },
): Record<string, unknown> {
  const account = (identity: GitIdentity) => {
    const user = options.userByEmail(identity.email);
    return user ? userShape(urls, user) : {};
  };
  const shape: Record<string, unknown> = {
    url: urls.repoApi(fullName, `/commits/${commit.sha}`),
    sha: commit.sha,
    node_id: nodeId('Commit', commit.sha),
    html_url: urls.repoHtml(fullName, `/commit/${commit.sha}`),
    comments_url: urls.repoApi(fullName, `/commits/${commit.sha}/comments`),
    commit: {
      url: urls.repoApi(fullName, `/git/commits/${commit.sha}`),
      author: gitUser(commit.author),
      committer: gitUser(commit.committer),
      message: commit.message.replace(/\n$/, ''),
      comment_count: 0,
      tree: { sha: commit.tree, url: urls.repoApi(fullName, `/git/trees/${commit.tree}`) },
      verification: verificationShape(options.verified),
    },
    author: account(commit.author),
    committer: account(commit.committer),
    parents: commit.parents.map((sha) => ({
      sha,
      url: urls.repoApi(fullName, `/commits/${sha}`),
      html_url: urls.repoHtml(fullName, `/commit/${sha}`),
    })),
  };
  if (options.files) {
    const additions = options.files.reduce((sum, file) => sum + Number(file.additions), 0);
    const deletions = options.files.reduce((sum, file) => sum + Number(file.deletions), 0);
    shape.stats = { additions, deletions, total: additions + deletions };
    shape.files = options.files;
  }
  return shape;
}

const MAX_PATCH_CHARS = 1024 * 1024;

/** `diff-entry` (compare, pull files, commit files). `ref` is the commit the file URLs point at. */
export function diffEntryShape(urls: Urls, fullName: string, ref: string, change: FileChange): Record<string, unknown> {
  const encoded = change.path.split('/').map(encodeURIComponent).join('/');
  const shape: Record<string, unknown> = {
    sha: change.sha,
    filename: change.path,
    status: change.status,
    additions: change.additions,
    deletions: change.deletions,
    changes: change.additions + change.deletions,
    blob_url: urls.repoHtml(fullName, `/blob/${ref}/${encoded}`),
    raw_url: urls.repoHtml(fullName, `/raw/${ref}/${encoded}`),
    contents_url: `${urls.repoApi(fullName, `/contents/${encoded}`)}?ref=${ref}`,
  };
  // GitHub leaves out the patch of a large diff (the file entry stays).
  if (change.patch !== undefined && change.patch.length <= MAX_PATCH_CHARS) shape.patch = change.patch;
  if (change.previousPath !== undefined) shape.previous_filename = change.previousPath;
  return shape;
}

/** `git-ref`. */
export function refShape(
  urls: Urls,
  fullName: string,
  ref: string,
  sha: string,
  type: string,
): Record<string, unknown> {
  return {
    ref,
    node_id: nodeId('Ref', `${fullName}:${ref}`),
    url: urls.repoApi(fullName, `/git/${ref}`),
    object: { type, sha, url: urls.repoApi(fullName, `/git/${type}s/${sha}`) },
  };
}

/** `git-tree`. Paths are relative to the tree; recursive listings use full paths. */
export function treeShape(urls: Urls, fullName: string, sha: string, entries: TreeEntry[]): Record<string, unknown> {
  return {
    sha,
    url: urls.repoApi(fullName, `/git/trees/${sha}`),
    truncated: false,
    tree: entries.map((entry) => {
      const item: Record<string, unknown> = { path: entry.path, mode: entry.mode, type: entry.type, sha: entry.sha };
      if (entry.size !== undefined) item.size = entry.size;
      if (entry.type !== 'commit') item.url = urls.repoApi(fullName, `/git/${entry.type}s/${entry.sha}`);
      return item;
    }),
  };
}

/** One item of a contents listing or a single file (`content-file` when `content` is given). */
export function contentShape(
  urls: Urls,
  fullName: string,
  ref: string,
  entry: { path: string; sha: string; size: number; type: 'file' | 'dir' | 'symlink' | 'submodule' },
  content?: Buffer,
): Record<string, unknown> {
  const encoded = entry.path.split('/').map(encodeURIComponent).join('/');
  const self = `${urls.repoApi(fullName, `/contents/${encoded}`)}?ref=${encodeURIComponent(ref)}`;
  const git = urls.repoApi(fullName, `/git/${entry.type === 'dir' ? 'trees' : 'blobs'}/${entry.sha}`);
  const html = urls.repoHtml(fullName, `/${entry.type === 'dir' ? 'tree' : 'blob'}/${ref}/${encoded}`);
  const shape: Record<string, unknown> = {
    type: entry.type,
    size: entry.size,
    name: entry.path.split('/').pop() ?? entry.path,
    path: entry.path,
    sha: entry.sha,
    url: self,
    git_url: git,
    html_url: html,
    download_url: entry.type === 'file' ? urls.repoHtml(fullName, `/raw/${ref}/${encoded}`) : null,
    _links: { self, git, html },
  };
  if (content && content.length > INLINE_CONTENT_BYTES) {
    // GitHub answers files over 1 MB without their content (encoding "none"); raw media type or the blob API reads them.
    shape.content = '';
    shape.encoding = 'none';
  } else if (content) {
    shape.content = content.toString('base64').replace(/(.{60})/g, '$1\n');
    shape.encoding = 'base64';
  }
  return shape;
}

const INLINE_CONTENT_BYTES = 1024 * 1024;
