/**
 * The git objects the simulator reads, as data: what `GitRepository` (git.ts) returns and the
 * plumbing parsers (git-parse.ts) build. A module of its own, so that neither of those two imports
 * the other's types back (the one import cycle the package had).
 */

/** Who wrote or committed a commit, and when. */
export interface GitIdentity {
  name: string;
  email: string;
  date: Date;
}

/** One entry of a git tree as `ls-tree -l` reports it. */
export interface TreeEntry {
  mode: string;
  type: 'blob' | 'tree' | 'commit';
  sha: string;
  path: string;
  /** Size in bytes for blobs; undefined for trees and submodules. */
  size?: number;
}

/** A parsed commit object. */
export interface CommitObject {
  sha: string;
  tree: string;
  parents: string[];
  author: GitIdentity;
  committer: GitIdentity;
  message: string;
}

/** One changed file between two trees, with line counts and the unified diff hunks. */
export interface FileChange {
  status: 'added' | 'removed' | 'modified' | 'renamed' | 'copied' | 'changed';
  path: string;
  previousPath?: string;
  sha: string | null;
  additions: number;
  deletions: number;
  /** The hunks (from the first `@@`), absent for binary files. */
  patch?: string;
}
