import type { ImageFacts, SourceRepository } from './image-facts.js';
import { cell, code, escapeText } from './markdown.js';

/**
 * "What changed" in a bump or promotion pull request, image by image: the image's own facts
 * (digest, created, platforms, size), its source repository and the range between the revision
 * the environment runs and the one proposed, the commits, merged pull requests and releases in
 * that range, and a compare link. Pure: the jobs fetch, this renders.
 *
 * Everything from a source repository is hostile text. Commit lines, titles and names are escaped
 * (no markdown or HTML breaks out) and made inert: a word joiner after every `@` and between `#`
 * and a digit, so nobody is notified and no issue is cross-referenced, and links to issues and
 * pull requests go through `redirect.github.com`, which GitHub does not turn into backlinks
 * (Renovate's reason for the same rewrite). Release notes are shown as they are written, inside a
 * fenced code block, where GitHub reads no markdown, HTML, mention or reference.
 */

export interface SourceCommit {
  sha: string;
  message: string;
  /** The GitHub login when the commit is linked to an account, else the git author name. */
  author?: string;
  /** Pull requests the commit belongs to (numbers). */
  pulls?: number[];
}

export interface SourcePull {
  number: number;
  title: string;
  author?: string;
  mergedAt?: string;
}

export interface SourceRelease {
  tag: string;
  name?: string;
  body?: string;
  publishedAt?: string;
  prerelease?: boolean;
}

/** What was read of the source repository between two revisions, or why nothing was. */
export type SourceRange =
  | {
      kind: 'read';
      base: string;
      head: string;
      /** Commits in the range, oldest first, as far as they were read. */
      commits: SourceCommit[];
      /** How many commits the range holds in all (GitHub's `total_commits`). */
      totalCommits: number;
      pulls: SourcePull[];
      releases: SourceRelease[];
    }
  | {
      kind: 'unavailable';
      base?: string;
      head?: string;
      reason: string;
      /** The source is more visible than allowed here (see {@link notesVisible}): its name is not shown either. */
      hidden?: true;
    };

/** A repository's visibility, as GitHub's `visibility` field says it. */
export type RepoVisibility = 'public' | 'internal' | 'private';

/** What the pull request says where the notes of a source it may not show would be. */
export const PRIVATE_SOURCE = 'private source, not shown';

/**
 * Whether the notes of a source repository (commit messages, pull request titles, release
 * bodies) may be shown in a pull request of the GitOps repository: only when whoever reads the
 * GitOps repository may read the source, as far as visibility tells.
 * - a public source: everywhere;
 * - a public GitOps repository: public sources only;
 * - an internal GitOps repository (readable by every member of the enterprise): internal sources of
 *   the same owner (the same readers); never private ones;
 * - a private GitOps repository: private or internal sources of the same owner (the owner's
 *   members see both); never another owner's.
 */
export function notesVisible(
  gitops: { owner: string; visibility: RepoVisibility },
  source: { owner: string; visibility: RepoVisibility },
): boolean {
  if (source.visibility === 'public') return true;
  if (gitops.visibility === 'public') return false;
  if (source.owner.toLowerCase() !== gitops.owner.toLowerCase()) return false;
  return gitops.visibility === 'private' || source.visibility === 'internal';
}

export interface ImageNotes {
  /** The image as the files name it. */
  image: string;
  /** What the environment runs now (absent for a first bump). */
  from?: { tag: string; digest?: string };
  to: { tag: string; digest?: string };
  /** The registry's facts of the proposed image; absent when the registry was not read. */
  facts?: ImageFacts;
  /** Why the registry was not read, when it was not. */
  factsMissing?: string;
  /** The source repository (from the image's labels or the CI API), parsed when it is on GitHub. */
  source?: { url: string; repository?: SourceRepository };
  /** The sender's `source` when the image's own label names another repository (the label wins). */
  sentSource?: string;
  range?: SourceRange;
}

export interface NotesOptions {
  /** Characters the whole section may take (GitHub's body limit minus the rest of the body). */
  budget: number;
  /** The web host of the GitHub server holding the sources. @default github.com */
  webHost?: string;
}

/** GitHub rejects a pull request body over 65,536 characters. */
export const PR_BODY_LIMIT = 65_536;

const WORD_JOINER = '&#8288;';

/** Escaped, single-line, inert text: no markdown, no HTML, no mention, no reference. */
export function inertText(text: string): string {
  // Bidirectional controls would let a commit line display in another order than it reads.
  return escapeText(redirectIssueLinks(text.replace(/[\u202A-\u202E\u2066-\u2069]/g, '')))
    .replace(/#(?=\d)/g, `#${WORD_JOINER}`)
    .replace(/@/g, `@${WORD_JOINER}`)
    .replace(/\b(GH)(\\?-)(?=\d)/gi, `$1$2${WORD_JOINER}`);
}

/** `https://github.com/o/r/issues/1` → `https://redirect.github.com/o/r/issues/1`: a link GitHub does not backlink. */
export function redirectIssueLinks(text: string): string {
  return text.replace(
    /\b(?:https?:\/\/)?(?:www\.)?github\.com\/([\w.-]+\/[\w.-]+\/(?:issues|pull|discussions)\/\d+)/gi,
    'https://redirect.github.com/$1',
  );
}

/** A fenced code block holding `text` literally, whatever backticks it contains. */
export function literalBlock(text: string): string {
  const longest = Math.max(2, ...(text.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(longest + 1);
  return `${fence}text\n${text.replace(/\r\n?/g, '\n').replace(/\n+$/, '')}\n${fence}`;
}

/** `12.3 MB`, `900 B`: powers of 1000, as registries and Docker show sizes. */
export function formatSize(bytes: number): string {
  if (bytes < 1000) return `${bytes} B`;
  const units = ['kB', 'MB', 'GB', 'TB'];
  let value = bytes / 1000;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return `${value.toFixed(1)} ${units[unit]}`;
}

/** `2026-11-30 10:00 UTC` from an RFC 3339 time; the text as code when it does not parse. */
function formatTime(text: string): string {
  const match = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})/.exec(text);
  if (!match || !/(Z|[+-]00:00)$/.test(text)) return code(text);
  return `${match[1]} ${match[2]} UTC`;
}

function shortSha(sha: string): string {
  return /^[0-9a-f]{40,64}$/.test(sha) ? sha.slice(0, 7) : sha.slice(0, 40);
}

const SHA = /^[0-9a-f]{7,64}$/;
const TAG = /^[\w][\w.+-]{0,127}$/;

/** How much of each list one rendering shows; the renderer steps down these until the section fits. */
interface Detail {
  commits: number;
  pulls: number;
  releases: number;
  releaseBody: number;
}

const DETAILS: Detail[] = [
  { commits: 250, pulls: 100, releases: 20, releaseBody: 4000 },
  { commits: 100, pulls: 50, releases: 10, releaseBody: 2000 },
  { commits: 50, pulls: 25, releases: 10, releaseBody: 800 },
  { commits: 20, pulls: 10, releases: 5, releaseBody: 300 },
  { commits: 10, pulls: 5, releases: 3, releaseBody: 0 },
  { commits: 0, pulls: 0, releases: 0, releaseBody: 0 },
];

/**
 * The "What changed" section for every image of a pull request, within `budget` characters:
 * each image first at full detail, then with fewer commits, pull requests and shorter release
 * notes until the whole fits; at the least, the facts and the compare link. Long lists are folded
 * behind `<details>`, and each list that was cut ends with the compare link. A range shared by
 * several images (one repository, one pair of revisions) is shown once.
 */
export function renderReleaseNotes(images: readonly ImageNotes[], options: NotesOptions): string {
  if (images.length === 0) return '';
  const webHost = options.webHost ?? 'github.com';
  for (const detail of DETAILS) {
    const text = renderAll(images, detail, webHost);
    if (text.length <= options.budget) return text;
  }
  // Not even the facts fit: name the images and say so, within the budget.
  const short = [
    '### What changed',
    '',
    `The details of ${images.length} image${images.length === 1 ? '' : 's'} do not fit in this pull request; see each image's source repository.`,
  ].join('\n');
  return short.length <= options.budget ? short : '';
}

function renderAll(images: readonly ImageNotes[], detail: Detail, webHost: string): string {
  const lines = ['### What changed'];
  const shown = new Map<string, string>();
  for (const notes of images) {
    lines.push('', ...renderImage(notes, detail, webHost, shown));
  }
  return lines.join('\n');
}

function renderImage(notes: ImageNotes, detail: Detail, webHost: string, shown: Map<string, string>): string[] {
  const lines: string[] = [];
  const from = notes.from ? `${code(notes.from.tag)} → ` : '';
  lines.push(`#### ${code(notes.image)} ${from}${code(notes.to.tag)}`, '');
  lines.push(...factRows(notes, webHost));
  const range = notes.range;
  const hidden = range?.kind === 'unavailable' && range.hidden === true;
  const repo = hidden ? undefined : notes.source?.repository;
  const compare =
    repo && range?.base && range.head && SHA.test(range.base) && SHA.test(range.head)
      ? `https://${webHost}/${repo.owner}/${repo.repo}/compare/${range.base}...${range.head}`
      : undefined;
  const compareLink = compare
    ? `[Compare ${shortSha(range!.base!)}...${shortSha(range!.head!)}](${compare})`
    : undefined;
  if (!range) return lines;
  if (range.kind === 'unavailable') {
    lines.push('', `${inertText(range.reason)}${compareLink ? ` ${compareLink}` : ''}`);
    return lines;
  }
  const key = `${repo ? `${repo.owner}/${repo.repo}` : ''} ${range.base} ${range.head}`;
  const earlier = shown.get(key);
  if (earlier) {
    lines.push('', `Same source changes as ${code(earlier)} above. ${compareLink ?? ''}`.trimEnd());
    return lines;
  }
  shown.set(key, notes.image);
  if (range.totalCommits === 0) {
    lines.push('', `No commits between the two revisions.${compareLink ? ` ${compareLink}` : ''}`);
    return lines;
  }
  const more = (hidden: number): string =>
    hidden > 0 ? `- … and ${hidden} more${compareLink ? `: ${compareLink}` : ''}` : '';
  const list = (title: string, items: string[], total: number): string[] =>
    foldedList(title, items, more(total - items.length), compareLink);

  if (range.releases.length > 0 && detail.releases > 0) {
    lines.push('', `**Releases** (${range.releases.length})`, '');
    for (const release of range.releases.slice(0, detail.releases)) {
      const tag = TAG.test(release.tag) ? release.tag : '';
      const url =
        repo && tag ? `https://${webHost}/${repo.owner}/${repo.repo}/releases/tag/${encodeURIComponent(tag)}` : '';
      const title = `${inertText(release.tag)}${release.name && release.name !== release.tag ? `: ${inertText(release.name)}` : ''}${release.prerelease ? ' (pre-release)' : ''}`;
      const body = (release.body ?? '').trim();
      if (detail.releaseBody > 0 && body) {
        const cut = body.length > detail.releaseBody ? `${body.slice(0, detail.releaseBody)}\n…` : body;
        lines.push(
          `<details><summary>${title}</summary>`,
          '',
          literalBlock(cut),
          '',
          url ? `[Release page](${url})` : '',
          '</details>',
          '',
        );
      } else lines.push(`- ${url ? `[${title}](${url})` : title}`);
    }
    const hidden = range.releases.length - Math.min(detail.releases, range.releases.length);
    if (hidden > 0) lines.push(more(hidden));
  } else if (range.releases.length > 0) {
    lines.push('', `**Releases**: ${range.releases.length}${compareLink ? `, ${compareLink}` : ''}`);
  }

  lines.push(
    ...list(
      `Merged pull requests (${range.pulls.length})`,
      range.pulls.slice(0, detail.pulls).map((pull) => {
        const link = repo
          ? `[#${WORD_JOINER}${pull.number}](${pullUrl(repo, pull.number, webHost)})`
          : `#${WORD_JOINER}${pull.number}`;
        return `- ${link} ${inertText(pull.title)}${pull.author ? ` (${code(pull.author)})` : ''}`;
      }),
      range.pulls.length,
    ),
  );

  lines.push(
    ...list(
      `Commits (${range.totalCommits})`,
      range.commits.slice(0, detail.commits).map((commit) => {
        const first = commit.message.split(/\r\n?|\n/, 1)[0] ?? '';
        const sha = SHA.test(commit.sha) ? commit.sha : '';
        const shaText = sha
          ? repo
            ? `[${code(shortSha(sha))}](https://${webHost}/${repo.owner}/${repo.repo}/commit/${sha})`
            : code(shortSha(sha))
          : '';
        const pulls = (commit.pulls ?? [])
          .filter((n) => Number.isInteger(n) && n > 0)
          .map((n) => (repo ? `[#${WORD_JOINER}${n}](${pullUrl(repo, n, webHost)})` : `#${WORD_JOINER}${n}`));
        return `- ${shaText} ${inertText(first)}${commit.author ? ` (${code(commit.author)})` : ''}${pulls.length ? ` ${pulls.join(', ')}` : ''}`;
      }),
      range.totalCommits,
    ),
  );
  if (compareLink) lines.push('', compareLink);
  return lines;
}

/** A list under a heading; folded behind `<details>` when it is long, ending with the compare link when cut. */
function foldedList(title: string, items: string[], tail: string, compareLink: string | undefined): string[] {
  if (items.length === 0 && !tail) return [];
  if (items.length === 0) return ['', `**${title}**${compareLink ? `: ${compareLink}` : ''}`];
  const list = [...items, ...(tail ? [tail] : [])];
  if (list.length <= 10) return ['', `**${title}**`, '', ...list];
  return ['', `<details><summary>${title}</summary>`, '', ...list, '', '</details>'];
}

function pullUrl(repo: SourceRepository, number: number, webHost: string): string {
  const host = webHost === 'github.com' ? 'redirect.github.com' : webHost;
  return `https://${host}/${repo.owner}/${repo.repo}/pull/${number}`;
}

function factRows(notes: ImageNotes, webHost: string): string[] {
  const rows: Array<[string, string]> = [];
  const facts = notes.facts;
  const digest = facts?.digest ?? notes.to.digest;
  if (digest) rows.push(['Digest', code(digest)]);
  if (facts?.created) rows.push(['Created', formatTime(facts.created)]);
  if (facts && facts.platforms.length > 0) rows.push(['Platforms', facts.platforms.map((p) => code(p)).join(', ')]);
  if (facts?.size !== undefined)
    rows.push(['Size', `${formatSize(facts.size)}${facts.sizePlatform ? ` (${code(facts.sizePlatform)})` : ''}`]);
  if (facts?.version && facts.version !== notes.to.tag) rows.push(['Version', code(facts.version)]);
  const source = notes.source;
  const hidden = notes.range?.kind === 'unavailable' && notes.range.hidden === true;
  if (source && hidden) rows.push(['Source', PRIVATE_SOURCE]);
  else if (source) {
    const repo = source.repository;
    rows.push([
      'Source',
      repo
        ? `[${escapeText(`${repo.owner}/${repo.repo}`)}](https://${webHost}/${repo.owner}/${repo.repo})`
        : code(source.url),
    ]);
  }
  const range = notes.range;
  if (range?.base || range?.head)
    rows.push([
      'Revisions',
      `${range.base ? code(shortSha(range.base)) : 'unknown'} → ${range.head ? code(shortSha(range.head)) : 'unknown'}`,
    ]);
  const lines = rows.length > 0 ? ['| | |', '|---|---|', ...rows.map(([k, v]) => `| ${k} | ${cell(v)} |`)] : [];
  if (notes.factsMissing) lines.push('', escapeText(notes.factsMissing));
  if (notes.sentSource)
    lines.push(
      '',
      `The sender named ${code(notes.sentSource.slice(0, 300))} as the source, but the image's label ${code('org.opencontainers.image.source')} names ${hidden || !source ? 'another repository' : code(source.url)}: the label wins, since the image carries it.`,
    );
  return lines;
}
