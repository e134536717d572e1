import type { CommitObject, FileChange, GitIdentity, TreeEntry } from './git-objects.js';

/** Parsers for the plumbing output `GitRepository` reads (`ls-tree -z -l`, `cat-file commit`, `diff --raw/--numstat -z`). */

export function parseTreeLine(line: string): TreeEntry {
  const tab = line.indexOf('\t');
  const [mode = '', type = '', sha = '', size = '-'] = line.slice(0, tab).split(/\s+/);
  const entry: TreeEntry = { mode, type: type as TreeEntry['type'], sha, path: line.slice(tab + 1) };
  if (size !== '-') entry.size = Number(size);
  return entry;
}

function parseIdentity(value: string): GitIdentity {
  const match = /^(.*) <(.*)> (\d+) ([+-]\d{4})$/.exec(value);
  if (!match) return { name: value, email: '', date: new Date(0) };
  return { name: match[1] ?? '', email: match[2] ?? '', date: new Date(Number(match[3]) * 1000) };
}

export function parseCommit(sha: string, raw: string): CommitObject {
  const split = raw.indexOf('\n\n');
  const headers = (split === -1 ? raw : raw.slice(0, split)).split('\n');
  const message = split === -1 ? '' : raw.slice(split + 2);
  const commit: CommitObject = {
    sha,
    tree: '',
    parents: [],
    message,
    author: parseIdentity(''),
    committer: parseIdentity(''),
  };
  for (const line of headers) {
    const space = line.indexOf(' ');
    const key = line.slice(0, space);
    const value = line.slice(space + 1);
    if (key === 'tree') commit.tree = value;
    else if (key === 'parent') commit.parents.push(value);
    else if (key === 'author') commit.author = parseIdentity(value);
    else if (key === 'committer') commit.committer = parseIdentity(value);
  }
  return commit;
}

const STATUS: Record<string, FileChange['status']> = {
  A: 'added',
  D: 'removed',
  M: 'modified',
  R: 'renamed',
  C: 'copied',
  T: 'changed',
};

export function parseRaw(raw: string): Omit<FileChange, 'additions' | 'deletions' | 'patch'>[] {
  const fields = raw.split('\0');
  const changes: Omit<FileChange, 'additions' | 'deletions' | 'patch'>[] = [];
  for (let i = 0; i < fields.length; i++) {
    const meta = fields[i];
    if (!meta?.startsWith(':')) continue;
    const [, , , newSha = '', statusField = 'M'] = meta.slice(1).split(' ');
    const letter = statusField.charAt(0);
    const status = STATUS[letter] ?? 'modified';
    const sha = status === 'removed' ? null : newSha;
    if (letter === 'R' || letter === 'C') {
      changes.push({ status, previousPath: fields[i + 1] ?? '', path: fields[i + 2] ?? '', sha });
      i += 2;
    } else {
      changes.push({ status, path: fields[i + 1] ?? '', sha });
      i += 1;
    }
  }
  return changes;
}

export function parseNumstat(raw: string): { additions: number; deletions: number }[] {
  const fields = raw.split('\0');
  const counts: { additions: number; deletions: number }[] = [];
  for (let i = 0; i < fields.length; i++) {
    const field = fields[i];
    if (!field) continue;
    const [added = '0', deleted = '0', path = ''] = field.split('\t');
    counts.push({ additions: Number(added) || 0, deletions: Number(deleted) || 0 });
    // A rename prints an empty path followed by the old and new paths as separate fields.
    if (path === '') i += 2;
  }
  return counts;
}

/**
 * Splits the output of one `git diff --raw --numstat --patch -z` into what `--raw -z`,
 * `--numstat -z` and `--patch` print alone: raw records (each `:meta`, then one path or two for
 * a rename or copy), numstat records (each `added\tdeleted\tpath`, or `added\tdeleted\t` and two
 * paths), then git's separator (one NUL, as `-z` makes it) and the patch text unchanged.
 */
export function splitCombinedDiff(output: string): { raw: string; numstat: string; patch: string } {
  const fields = output.split('\0');
  let i = 0;
  while (fields[i]?.startsWith(':')) i += /^[RC]/.test(fields[i]?.split(' ')[4] ?? '') ? 3 : 2;
  const rawEnd = i;
  while (i < fields.length && fields[i] !== '') i += /^(\d+|-)\t(\d+|-)\t$/.test(fields[i] ?? '') ? 3 : 1;
  return {
    raw: fields.slice(0, rawEnd).join('\0'),
    numstat: fields.slice(rawEnd, i).join('\0'),
    patch: fields.slice(i + 1).join('\0'),
  };
}

/** Splits `git diff` output per file and keeps only the hunks, as GitHub's `patch` field does. */
export function splitPatches(diff: string): (string | undefined)[] {
  const sections = diff.split(/^diff --git /m).slice(1);
  return sections.map((section) => {
    const hunk = section.search(/^@@/m);
    if (hunk === -1) return undefined;
    return section.slice(hunk).replace(/\n$/, '');
  });
}
