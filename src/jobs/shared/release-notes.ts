import { loadSourceAccess, loadSourceRange } from '../../adapters/github/source-repo.js';
import { RegistryError, type RegistryAccess, type RegistryClient } from '../../adapters/registry/client.js';
import type { GitHubClients } from '../../adapters/github/client.js';
import type { Logger } from '../../observability/logger.js';
import { parseSourceRepository, type ImageFacts, type SourceRepository } from '../../planners/image-facts.js';
import { renderReleaseNotes, type ImageNotes, type SourceRange } from '../../planners/release-notes.js';

/** What the notes of a pull request need: the registry client and the GitHub web host of sources. */
export interface NotesDeps {
  /** Registry clients by owner: an installation reads images with its owner's credentials only. */
  registry: RegistryAccess;
  /** `github.com`, or the GitHub Enterprise host: source URLs on it are read through the App. */
  webHost: string;
  /** ESCALATOR_SIGSTORE_TRUSTED_ROOTS: where the trusted roots of verification policies are mounted. */
  trustedRoots?: string;
}

/** One image of a pull request: what the environment runs, what is proposed, and what its sender said of its source. */
export interface NotedImage {
  repository: string;
  from?: { tag: string; digest?: string };
  to: { tag: string; digest?: string };
  /** From the event (CI API `source`, `revision`); the image's labels are read when absent. */
  sourceUrl?: string;
  revision?: string;
}

/** The body may hold 65,536 characters; the table, warnings and marker take the rest. */
export const NOTES_BUDGET = 45_000;

/** The GitHub web host of an API URL: `https://api.github.com` → `github.com`; GHES `https://host/api/v3` → `host`. */
export function webHostOf(apiUrl: string): string {
  const host = new URL(apiUrl).host;
  return host === 'api.github.com' ? 'github.com' : host;
}

/** The GitOps repository a pull request is in, and the installation that reads for it. */
export interface NotesFor {
  installationId: number;
  owner: string;
  repo: string;
}

/**
 * The "What changed" section of a bump or promotion pull request:
 * 1. per image, the registry's facts of the proposed version and the revision of the running one,
 *    read with the credentials of the GitOps repository's owner (or anonymously), never another's
 * 2. the source repository (the image's label, else the sender's `source`; when both name one and
 *    they differ, the label wins and the section says so) and its range, read through the App's
 *    installation of this repository, and only when the source is no more private than the
 *    GitOps repository (else "private source, not shown")
 * 3. rendered within the budget
 * Reading notes never fails the job: what could not be read is one sentence in the section.
 */
export async function loadReleaseNotes(
  github: GitHubClients,
  notes: NotesDeps,
  images: readonly NotedImage[],
  options: NotesFor & { log: Logger; budget?: number },
): Promise<string> {
  const entries: ImageNotes[] = [];
  const registry = notes.registry.forOwner(options.owner);
  for (const image of images) {
    try {
      entries.push(await noteImage(github, notes, registry, image, options));
    } catch (error) {
      options.log.warn(
        { image: image.repository, tag: image.to.tag, err: { message: (error as Error).message } },
        'Release notes not read; the pull request says why',
      );
      entries.push({
        image: image.repository,
        ...(image.from ? { from: image.from } : {}),
        to: image.to,
        factsMissing: `Escalator could not read what changed: ${(error as Error).message}.`,
      });
    }
  }
  return renderReleaseNotes(entries, { budget: options.budget ?? NOTES_BUDGET, webHost: notes.webHost });
}

async function inspect(
  registry: RegistryClient,
  repository: string,
  tag: string,
): Promise<{ facts?: ImageFacts; missing?: string }> {
  try {
    const facts = await registry.inspect(repository, tag);
    return facts ? { facts } : { missing: `The registry has no tag ${tag} of ${repository}.` };
  } catch (error) {
    if (error instanceof RegistryError) return { missing: `Escalator could not read the image: ${error.message}.` };
    throw error;
  }
}

/** Whether two source URLs name one repository (compared as GitHub repositories when both are). */
function sameSource(a: string, b: string, webHost: string): boolean {
  const [left, right] = [parseSourceRepository(a, webHost), parseSourceRepository(b, webHost)];
  if (left && right)
    return (
      left.owner.toLowerCase() === right.owner.toLowerCase() && left.repo.toLowerCase() === right.repo.toLowerCase()
    );
  const plain = (url: string) =>
    url
      .trim()
      .replace(/(\.git)?\/*$/, '')
      .toLowerCase();
  return plain(a) === plain(b);
}

async function noteImage(
  github: GitHubClients,
  notes: NotesDeps,
  registry: RegistryClient,
  image: NotedImage,
  pull: NotesFor,
): Promise<ImageNotes> {
  const entry: ImageNotes = { image: image.repository, to: image.to, ...(image.from ? { from: image.from } : {}) };
  const proposed = await inspect(registry, image.repository, image.to.tag);
  if (proposed.facts) entry.facts = proposed.facts;
  else if (proposed.missing) entry.factsMissing = proposed.missing;
  // The image's own label wins over what its sender says: the label travels with the bytes. The
  // sender's revision belongs to the sender's source, so it goes with it.
  const label = proposed.facts?.source;
  const disagree =
    label !== undefined && image.sourceUrl !== undefined && !sameSource(label, image.sourceUrl, notes.webHost);
  if (disagree) entry.sentSource = image.sourceUrl;
  const url = label ?? image.sourceUrl;
  const head = disagree ? proposed.facts?.revision : (image.revision ?? proposed.facts?.revision);
  if (!url) {
    if (proposed.facts)
      entry.range = {
        kind: 'unavailable',
        reason:
          'The image names no source repository: label it org.opencontainers.image.source (docs/registries.md) to see its changes here.',
      };
    return entry;
  }
  const repository = parseSourceRepository(url, notes.webHost);
  entry.source = { url, ...(repository ? { repository } : {}) };
  if (!repository) {
    entry.range = {
      kind: 'unavailable',
      reason: `Its source ${url} is not a repository on ${notes.webHost}, so Escalator cannot list its changes.`,
    };
    return entry;
  }
  // Nothing of a source more private than this repository, not even its name.
  const access = await loadSourceAccess(github, repository, {
    installationId: pull.installationId,
    gitops: { owner: pull.owner, repo: pull.repo },
  }).catch((error: Error): Extract<SourceRange, { kind: 'unavailable' }> => ({
    kind: 'unavailable',
    hidden: true,
    reason: `Private source, not shown: Escalator could not read from GitHub whether the image's source repository may be shown here (${error.message}).`,
  }));
  if (access.kind === 'unavailable' && access.hidden) {
    entry.range = access;
    return entry;
  }
  // The running version's revision: from its own labels (one more image read).
  let base: string | undefined;
  if (image.from && image.from.tag !== image.to.tag) {
    const running = await inspect(registry, image.repository, image.from.tag);
    base = running.facts?.revision;
  }
  entry.range =
    access.kind === 'unavailable'
      ? { ...access, ...(base ? { base } : {}), ...(head ? { head } : {}) }
      : await range(github, repository, base, head, pull, image);
  return entry;
}

async function range(
  github: GitHubClients,
  repository: SourceRepository,
  base: string | undefined,
  head: string | undefined,
  pull: NotesFor,
  image: NotedImage,
): Promise<SourceRange> {
  const ends = { ...(base ? { base } : {}), ...(head ? { head } : {}) };
  if (!head)
    return {
      kind: 'unavailable',
      ...ends,
      reason: `The image ${image.to.tag} names no source revision: label it org.opencontainers.image.revision (docs/registries.md) to see its changes here.`,
    };
  if (!image.from)
    return {
      kind: 'unavailable',
      ...ends,
      reason: 'The environment runs no earlier version of this image to compare with.',
    };
  if (!base)
    return {
      kind: 'unavailable',
      ...ends,
      reason: `The running version ${image.from.tag} names no source revision (org.opencontainers.image.revision), so there is no range to show.`,
    };
  if (base === head) return { kind: 'read', base, head, commits: [], totalCommits: 0, pulls: [], releases: [] };
  try {
    return await loadSourceRange(github, repository, base, head, {
      installationId: pull.installationId,
      gitops: { owner: pull.owner, repo: pull.repo },
      accessChecked: true,
    });
  } catch (error) {
    // The image's facts stay; only the range is missing, with why.
    return {
      kind: 'unavailable',
      base,
      head,
      reason: `Escalator could not read the changes of ${repository.owner}/${repository.repo} from GitHub (${(error as Error).message}).`,
    };
  }
}
