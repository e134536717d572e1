import { RequestError } from '@octokit/request-error';
import type { SourceRepository } from '../../planners/image-facts.js';
import {
  notesVisible,
  PRIVATE_SOURCE,
  type RepoVisibility,
  type SourceCommit,
  type SourcePull,
  type SourceRange,
  type SourceRelease,
} from '../../planners/release-notes.js';
import type { GitHubClients } from './client.js';

/**
 * What changed in an image's source repository between two revisions, read through the App:
 * 1. the installation on the source repository (`GET /repos/{o}/{r}/installation`, App JWT). It is
 *    read only through the installation of the GitOps repository asking: the code of one account
 *    never shows in another account's pull requests, whoever labelled the image
 * 1b. the visibility of the source and of the GitOps repository (`GET /repos/{o}/{r}` each): the
 *    notes of a source more visible than allowed (notesVisible) are not read, and the pull request
 *    says "private source, not shown"
 * 2. the commits (`GET /compare/{base}...{head}`, one page)
 * 3. the merged pull requests whose merge commit is in the range (`GET /pulls?state=closed`, one page)
 * 4. the releases (`GET /releases`, one page) and, when there are any, the tags
 *    (`GET /tags`, one page) to tell which fall in the range
 * A source that cannot be read is a sentence, never an error: notes never block a pull request.
 */

export interface SourceReadOptions {
  /** The installation of the GitOps repository the pull request is in. */
  installationId: number;
  /** The GitOps repository the pull request is in: the source may be no more private than it allows. */
  gitops: { owner: string; repo: string };
  /** Commits read from the compare (one page). @default 100 */
  maxCommits?: number;
}

/**
 * Steps 1 and 1b: whether the notes of `source` may be read for a pull request of
 * `options.gitops`, or why not (a range that is unavailable, `hidden` when the source is more
 * private than the GitOps repository allows).
 */
export async function loadSourceAccess(
  github: GitHubClients,
  source: SourceRepository,
  options: Pick<SourceReadOptions, 'installationId' | 'gitops'>,
): Promise<{ kind: 'readable' } | Extract<SourceRange, { kind: 'unavailable' }>> {
  const name = `${source.owner}/${source.repo}`;
  let installationId: number;
  try {
    installationId = (await github.app.rest.apps.getRepoInstallation({ owner: source.owner, repo: source.repo })).data
      .id;
  } catch (error) {
    if (error instanceof RequestError && error.status === 404)
      return {
        kind: 'unavailable',
        reason: `Escalator cannot show the changes of ${name}: the App is not installed on it (install it there with read access to contents and pull requests).`,
      };
    throw error;
  }
  if (installationId !== options.installationId)
    return {
      kind: 'unavailable',
      reason: `Escalator does not show the changes of ${name} here: it belongs to another installation of the App than this repository.`,
    };
  const octokit = github.forInstallation(installationId);
  const sourceVisibility = await loadVisibility(octokit, source);
  const gitopsVisibility = await loadVisibility(octokit, options.gitops);
  // Unknown visibility is private: notes are shown only when both are known to allow it.
  if (
    sourceVisibility &&
    gitopsVisibility &&
    notesVisible(
      { owner: options.gitops.owner, visibility: gitopsVisibility },
      { owner: source.owner, visibility: sourceVisibility },
    )
  )
    return { kind: 'readable' };
  return {
    kind: 'unavailable',
    hidden: true,
    reason: `${PRIVATE_SOURCE[0]!.toUpperCase()}${PRIVATE_SOURCE.slice(1)}: the image's source repository is not visible to everyone who reads this ${gitopsVisibility ?? 'private'} repository, so its commits, pull requests and releases stay out of this pull request.`,
  };
}

export async function loadSourceRange(
  github: GitHubClients,
  source: SourceRepository,
  base: string,
  head: string,
  options: SourceReadOptions & {
    /** loadSourceAccess said `readable` for this pull request already. */
    accessChecked?: boolean;
  },
): Promise<SourceRange> {
  const name = `${source.owner}/${source.repo}`;
  const unavailable = (reason: string): SourceRange => ({ kind: 'unavailable', base, head, reason });
  if (!options.accessChecked) {
    const access = await loadSourceAccess(github, source, options);
    if (access.kind === 'unavailable') return access.hidden ? access : { ...access, base, head };
  }
  const octokit = github.forInstallation(options.installationId);
  const id = { owner: source.owner, repo: source.repo };
  let compare;
  try {
    compare = (
      await octokit.rest.repos.compareCommitsWithBasehead({
        ...id,
        basehead: `${base}...${head}`,
        per_page: options.maxCommits ?? 100,
      })
    ).data;
  } catch (error) {
    if (error instanceof RequestError && (error.status === 404 || error.status === 422))
      return unavailable(
        `Escalator cannot compare the revisions in ${name}: GitHub does not find one of them there (${error.status}).`,
      );
    throw error;
  }
  if (compare.status === 'behind')
    return unavailable(
      `The proposed revision is ${compare.behind_by} commit${compare.behind_by === 1 ? '' : 's'} behind the running one in ${name}: this goes back.`,
    );
  const commits: SourceCommit[] = compare.commits.map((commit) => ({
    sha: commit.sha,
    message: commit.commit.message,
    ...(commit.author?.login
      ? { author: commit.author.login }
      : commit.commit.author?.name
        ? { author: commit.commit.author.name }
        : {}),
  }));

  // Merged pull requests in the range: one page of the recently closed ones, matched by the commit
  // their merge made (a merge commit, the squashed commit, or the last rebased one): one call,
  // where asking per commit (`GET /commits/{sha}/pulls`) would cost one call for each.
  const pulls = new Map<number, SourcePull>();
  const bySha = new Map(commits.map((commit) => [commit.sha, commit]));
  const closed = (
    await octokit.rest.pulls.list({ ...id, state: 'closed', sort: 'updated', direction: 'desc', per_page: 100 })
  ).data;
  for (const pull of closed) {
    const commit = pull.merged_at && pull.merge_commit_sha ? bySha.get(pull.merge_commit_sha) : undefined;
    if (!commit) continue;
    commit.pulls = [...(commit.pulls ?? []), pull.number];
    pulls.set(pull.number, {
      number: pull.number,
      title: pull.title,
      ...(pull.user?.login ? { author: pull.user.login } : {}),
      ...(pull.merged_at ? { mergedAt: pull.merged_at } : {}),
    });
  }

  const releases: SourceRelease[] = [];
  const listed = (await octokit.rest.repos.listReleases({ ...id, per_page: 100 })).data.filter(
    (release) => !release.draft,
  );
  if (listed.length > 0) {
    const inRange = new Set(commits.map((commit) => commit.sha));
    const tags = (await octokit.rest.repos.listTags({ ...id, per_page: 100 })).data;
    const tagged = new Set(tags.filter((tag) => inRange.has(tag.commit.sha)).map((tag) => tag.name));
    for (const release of listed.reverse()) {
      if (!tagged.has(release.tag_name)) continue;
      releases.push({
        tag: release.tag_name,
        ...(release.name ? { name: release.name } : {}),
        ...(release.body ? { body: release.body } : {}),
        ...(release.published_at ? { publishedAt: release.published_at } : {}),
        ...(release.prerelease ? { prerelease: true } : {}),
      });
    }
  }
  return {
    kind: 'read',
    base,
    head,
    commits,
    totalCommits: compare.total_commits,
    pulls: [...pulls.values()].sort((a, b) => a.number - b.number),
    releases,
  };
}

/**
 * A repository's visibility: `visibility` of `GET /repos/{owner}/{repo}` (full-repository in
 * GitHub's OpenAPI description: "public, private, or internal"), else `private` (required there);
 * undefined when GitHub does not show the repository.
 */
export async function loadVisibility(
  octokit: ReturnType<GitHubClients['forInstallation']>,
  repo: { owner: string; repo: string },
): Promise<RepoVisibility | undefined> {
  let data: { private: boolean; visibility?: string };
  try {
    data = (await octokit.rest.repos.get({ owner: repo.owner, repo: repo.repo })).data;
  } catch (error) {
    if (error instanceof RequestError && (error.status === 404 || error.status === 403)) return undefined;
    throw error;
  }
  if (data.visibility === 'public' || data.visibility === 'internal' || data.visibility === 'private')
    return data.private && data.visibility === 'public' ? 'private' : data.visibility;
  return data.private ? 'private' : 'public';
}
