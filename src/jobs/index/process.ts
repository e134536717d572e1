import { listInstalledRepos } from '../../adapters/github/app.js';
import {
  ensureCheckRun,
  loadBranch,
  loadDefaultBranch,
  loadFile,
  loadTree,
  type RepoId,
} from '../../adapters/github/repo.js';
import type { IndexedFile, RepoIndex } from '../../adapters/store/subscriptions.js';
import { configPath, formatProblems, parseRepoConfig } from '../../config/repo-config.js';
import { ConfigError } from '../../observability/errors.js';
import type { Logger } from '../../observability/logger.js';
import { promotesConfig } from '../../planners/config-routes.js';
import { planEnvironmentFiles } from '../../planners/environment-files.js';
import { IMAGE_READER_VERSION, imagesWithoutEntry, listImages } from '../../planners/image-edit/index.js';
import { kindFromPath } from '../../planners/image-edit/detect.js';
import { normalizeName } from '../../planners/image-ref.js';
import { loadRenderedFiles } from '../shared/rendered-files.js';
import type { Octokit } from '../../adapters/github/client.js';
import { parseTargetKey, targetKey, versionId, versionsByTarget } from '../../planners/versions.js';
import type { IndexJob, ResyncJob } from './job.js';
import { enqueuePromote, wakeLanding } from '../../queue/enqueue.js';
import type { ProcessorContext } from '../../queue/worker.js';
import { keepsDeployments, relookEarlyReport, startDeployment } from '../shared/deployments.js';
import { refreshDashboard } from '../shared/dashboard-refresh.js';
import type { JobDeps } from '../shared/deps.js';
import { enqueuePromotionsOutOf } from '../shared/promotion-inputs.js';

/** What the index records of one environment file. */
type FileImages = Pick<IndexedFile, 'images' | 'versions'>;

/**
 * The images an environment file references, or null (and a warning) when it is gone, too large,
 * or unreadable: such a file is read again by the next index, so the warning repeats until fixed.
 */
async function readImages(
  octokit: Parameters<typeof loadFile>[0],
  id: { owner: string; repo: string },
  path: string,
  sha: string,
  log: Logger,
  /** Keeps the text read (by its blob SHA, for the jobs that plan against this commit). */
  keep: (text: string) => Promise<void>,
): Promise<FileImages | null> {
  let content: string | null;
  try {
    content = await loadFile(octokit, id, path, sha);
    if (content !== null) await keep(content);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    log.warn(
      { path, reason: error.message },
      'A file in an environment was not read; Escalator will not bump it until the file is fixed',
    );
    return null;
  }
  if (content === null) return null;
  const { uses, refused } = listImages(content, { path });
  if (uses.length === 0 && refused.length > 0) {
    log.warn(
      { path, refused },
      'A file in an environment could not be read; Escalator will not bump it until the file is fixed',
    );
    return null;
  }
  const images = [...new Set(uses.map((use) => use.name))];
  const versions = images.map((name) => {
    const use = uses.find((u) => u.name === name && u.tag) ?? uses.find((u) => u.name === name);
    return { name, tag: use?.tag ?? '', ...(use?.digest ? { digest: use.digest } : {}) };
  });
  return { images, versions };
}

/** Images (normalized) a kustomization renders through its bases with no `images:` entry for them. */
async function renderedWithoutEntry(octokit: Octokit, id: RepoId, sha: string, path: string): Promise<string[]> {
  const text = await loadFile(octokit, id, path, sha).catch((error: unknown) => {
    if (error instanceof ConfigError) return null;
    throw error;
  });
  if (text === null) return [];
  const root = { path, text };
  const files = [root, ...(await loadRenderedFiles(octokit, id, sha, [root]))];
  const names = imagesWithoutEntry(files, [path], (file) =>
    listImages(file.text, { path: file.path }).uses.map((use) => use.written),
  ).get(path);
  return (names ?? []).flatMap((name) => {
    const normalized = normalizeName(name);
    return normalized === undefined ? [] : [normalized];
  });
}

/** What the previous index read from files whose blob is still the one in `tree`, by path. */
function unchangedReads(previous: RepoIndex | null, tree: ReadonlyMap<string, string>): Map<string, FileImages | null> {
  const reads = new Map<string, FileImages | null>();
  if (previous?.blobs?.reader !== IMAGE_READER_VERSION) return reads;
  const recorded = new Map(previous.files.map((file) => [file.path, { images: file.images, versions: file.versions }]));
  for (const [path, blob] of Object.entries(previous.blobs.shas)) {
    if (tree.get(path) === blob) reads.set(path, recorded.get(path) ?? { images: [], versions: [] });
  }
  return reads;
}

/**
 * What the head changed, kept with its index for the merge's landing; with the blob SHAs before
 * the change of the files the previous index read, when that index was built from the head's
 * first parent.
 */
function headChanges(
  changes: { parents: string[]; files: string[] },
  previous: RepoIndex | null,
): NonNullable<RepoIndex['changes']> {
  const before: Record<string, string> = {};
  const known = previous && previous.sha === changes.parents[0] ? (previous.blobs?.shas ?? {}) : {};
  for (const path of changes.files) if (Object.hasOwn(known, path)) before[path] = known[path] as string;
  return { parents: changes.parents, files: changes.files, before };
}

/**
 * Index one repository:
 * 1. read `.github/escalator.yml` on the default branch (none: drop the repository from the index)
 * 2. list the tree and map files onto environments and apps
 * 3. read each environment file whose blob changed since the last index (or that it could not
 *    read) and record the images it references; unchanged blobs keep what was found in them
 * 4. store the entry; config problems are stored too, so bumps can say why they do nothing
 */
export async function processIndexJob(
  deps: JobDeps,
  data: IndexJob,
  { log }: ProcessorContext,
): Promise<RepoIndex | null> {
  const octokit = deps.github.forInstallation(data.installationId);
  const id = { owner: data.owner, repo: data.repo };
  const defaultBranch = await loadDefaultBranch(octokit, id);
  const previous = await deps.store.subscriptions.loadRepo(data.owner, data.repo);
  // Where configuration is promoted, the same read lists what the head changed (for its landing).
  const head = await loadBranch(octokit, id, defaultBranch, {
    changes: promotesConfig(previous?.config?.environments),
  });
  const text = head ? await loadFile(octokit, id, configPath, head.sha) : null;
  if (!head || text === null) {
    await deps.store.subscriptions.dropRepo(data);
    log.info({ repo: `${data.owner}/${data.repo}` }, 'Repository has no Escalator config; not indexed');
    return null;
  }
  // The head it indexes is one the default branch pointed at (a push's delivery may have been missed).
  await deps.store.heads.record(data.owner, data.repo, head.sha, deps.now().getTime());
  const parsed = parseRepoConfig(text, configPath);
  const index: RepoIndex = {
    ...data,
    defaultBranch,
    sha: head.sha,
    config: parsed.ok ? parsed.config : null,
    problems: parsed.ok ? [] : parsed.problems,
    files: [],
  };
  if (parsed.ok) {
    const tree = await loadTree(octokit, id, head.treeSha);
    const reads = unchangedReads(previous, tree);
    const blobs: Record<string, string> = {};
    const adding = new Set(parsed.config.environments.filter((env) => env.addImages === true).map((env) => env.name));
    for (const file of planEnvironmentFiles(parsed.config, [...tree.keys()])) {
      let read = reads.get(file.path);
      if (read === undefined) {
        const blob = tree.get(file.path) as string;
        read = await readImages(octokit, id, file.path, head.sha, log, (text) =>
          deps.store.blobs.set(data.installationId, blob, text),
        );
        reads.set(file.path, read);
      }
      if (read === null) continue;
      if (adding.has(file.environment) && kindFromPath(file.path) === 'kustomize') {
        // addImages: a kustomization is subscribed to the images it renders without an entry too
        // (read every time: its bases may change while it does not).
        const rendered = await renderedWithoutEntry(octokit, id, head.sha, file.path);
        const images = [...new Set([...read.images, ...rendered])];
        if (images.length > 0) index.files.push({ ...file, ...read, images });
        continue;
      }
      blobs[file.path] = tree.get(file.path) as string;
      if (read.images.length > 0) index.files.push({ ...file, ...read });
    }
    index.blobs = { reader: IMAGE_READER_VERSION, shas: blobs };
    if (head.changes && promotesConfig(parsed.config.environments)) index.changes = headChanges(head.changes, previous);
  } else {
    log.warn(
      { repo: `${data.owner}/${data.repo}`, problems: parsed.problems.length },
      'Repository config is invalid; bumps paused until it is fixed',
    );
    await ensureCheckRun(octokit, id, head.sha, 'escalator/config', {
      status: 'completed',
      conclusion: 'failure',
      title: `${parsed.problems.length} problem${parsed.problems.length === 1 ? '' : 's'} in ${configPath}: Escalator is paused for this repository`,
      summary: [
        '```',
        formatProblems(parsed.problems),
        '```',
        '',
        "Fix the file on the default branch; `escalator validate-config` checks it locally (installed from Escalator's repository as its README says; not `npx escalator`, which is another npm package).",
      ].join('\n'),
    });
  }
  await deps.store.subscriptions.saveRepo(index);
  // A merge's landing may be waiting for the index to record the merge.
  if (index.changes) await wakeLanding(deps.producer, index, index.sha);
  if (index.config) await afterIndex(deps, previous, index, log);
  await refreshDashboard(deps, index, { index });
  log.info({ repo: `${data.owner}/${data.repo}`, sha: head.sha, files: index.files.length }, 'Repository indexed');
  return index;
}

/**
 * What changed since the last index, per (environment, app): record the versions' first-seen time
 * (soak) and history (rollback), then plan promotions out of every environment whose versions
 * moved — and into it, so a promotion that became unnecessary is closed.
 */
async function afterIndex(
  deps: JobDeps,
  previous: RepoIndex | null,
  index: RepoIndex,
  log: ProcessorContext['log'],
): Promise<void> {
  const now = deps.now().toISOString();
  const config = index.config!;
  const changed = new Set<string>();
  const landings: Array<{ environment: string; app: string; versions: IndexedFile['versions'] }> = [];
  const earlier = previous ? versionsByTarget(previous.files) : undefined;
  const current = versionsByTarget(index.files);
  for (const [key, versions] of current) {
    const before = earlier?.get(key);
    const { environment, app } = parseTargetKey(key);
    for (const version of versions)
      await deps.store.versions.recordSeen(index, environment, app, versionId(version), now);
    if (previous && JSON.stringify(before ?? []) !== JSON.stringify(versions)) {
      changed.add(environment);
      await deps.store.versions.pushHistory(index, environment, app, { at: now, sha: index.sha, versions });
      landings.push({ environment, app, versions });
      await enqueuePromotionsOutOf(deps, index, environment, app, 'push', index.sha);
      const self = config.environments.find((env) => env.name === environment);
      if (self && self.from !== 'registry') {
        await enqueuePromote(
          deps.producer,
          {
            installationId: index.installationId,
            owner: index.owner,
            repo: index.repo,
            environment,
            app: self.group ? '' : app,
            reason: 'push',
          },
          index.sha,
        );
      }
    } else if (!previous || !before) {
      await deps.store.versions.pushHistory(index, environment, app, { at: now, sha: index.sha, versions });
      // The first index of a repository (installed, or rebuilt after Redis lost it) is no landing,
      // yet what an environment runs may already differ from what it feeds: those promotions open
      // now, as after a merge, so the soak, window and freeze re-checks are scheduled from their
      // pull requests. Without this, `/escalator plan` listed them "ready at" a time at which
      // nothing opened (a health report re-checks open promotions only). Only targets whose
      // versions differ are planned (the job judges the rest), so installing on a large
      // repository does not cost a promotion job per app and environment.
      if (!previous) await planFirstPromotions(deps, index, environment, app, versions, current);
    }
  }
  if (changed.size > 0) log.info({ environments: [...changed] }, 'Environment versions changed');
  // Where the agent reports health, each merge gets its GitHub Deployment (docs/health.md); after
  // the promotions are planned, so a GitHub error here never costs one.
  for (const landing of landings) {
    const landedIn = config.environments.find((env) => env.name === landing.environment);
    if (landedIn?.health) await relookEarlyReport(deps, index, landedIn.name, landing.app, index.sha);
    if (keepsDeployments(landedIn))
      await startDeployment(deps, index, landedIn, landing.app, index.sha, landing.versions);
  }
}

/** The first index: a promotion out of (environment, app) into each target that runs other versions. */
async function planFirstPromotions(
  deps: JobDeps,
  index: RepoIndex,
  environment: string,
  app: string,
  versions: IndexedFile['versions'],
  current: Map<string, IndexedFile['versions']>,
): Promise<void> {
  const differs = (target: string) =>
    JSON.stringify(current.get(targetKey(target, app)) ?? []) !== JSON.stringify(versions);
  await enqueuePromotionsOutOf(deps, index, environment, app, 'push', index.sha, differs);
}

/**
 * After Redis lost the index: list every installation's repositories and index each one here,
 * in this job, so the index is complete before it is marked built (image jobs waiting on it retry).
 */
export async function processResyncJob(deps: JobDeps, _data: ResyncJob, context: ProcessorContext): Promise<number> {
  const installations = new Set<number>();
  let count = 0;
  for await (const repo of listInstalledRepos(deps.github.app, (installationId) =>
    deps.github.forInstallation(installationId),
  )) {
    installations.add(repo.installationId);
    await processIndexJob(deps, { ...repo, reason: 'resync' }, context);
    count++;
  }
  await deps.store.subscriptions.markBuilt();
  context.log.info({ installations: installations.size, repos: count }, 'Index rebuilt from GitHub');
  return count;
}
