import { commitContains } from '../../adapters/github/repo.js';
import type { RepoIndex, RepoKey } from '../../adapters/store/subscriptions.js';
import { parseDuration } from '../../config/repo-config.js';
import {
  newestChange,
  planHealthGate,
  type ConfigLanding,
  type HealthGateApp,
  type HealthGateDecision,
} from '../../planners/health-gate.js';
import type { AppHealth, HealthSource } from '../../planners/health.js';
import { readVersions, type PromotionInput } from '../../planners/promotion-plan.js';
import { rollbackNote } from '../../planners/rollback.js';
import { versionId } from '../../planners/versions.js';
import type { JobDeps } from './deps.js';

type Octokit = Parameters<typeof commitContains>[0];
type Environment = NonNullable<RepoIndex['config']>['environments'][number];

/**
 * Where the gate reads an app's recorded health. One place, so the store that folds the agents'
 * reports is swapped in here only.
 */
export function loadHealth(
  deps: JobDeps,
  key: RepoKey,
  environment: string,
  app: string,
): Promise<AppHealth | undefined> {
  return deps.store.health.load(key, environment, app);
}

/** The agent object expected to report `app` in `environment` (its `health` setting, `{app}` filled in). */
export function expectedSource(environment: Environment, app: string): Pick<HealthSource, 'agent' | 'object'> {
  const health = environment.health;
  if (health?.argocd) return { agent: 'argocd', object: health.argocd.replaceAll('{app}', app) };
  if (health?.flux) return { agent: 'flux', object: health.flux.replaceAll('{app}', app) };
  return { agent: 'status', object: (health?.statuses[0]?.context ?? '').replaceAll('{app}', app) };
}

/** `hello 1.4.2` (one image), `hello 1.4.2, 0.3.1` (several). */
export function runningText(app: string, versions: ReadonlyArray<{ tag: string }>): string {
  const tags = [...new Set(versions.map((version) => version.tag))];
  return `${app || 'these apps'} ${tags.join(', ')}`.trim();
}

/** Whether `revision` contains `merge`, from the cache or GitHub's compare API (then cached). */
export async function revisionContains(
  deps: JobDeps,
  octokit: Octokit,
  key: RepoKey,
  merge: string,
  revision: string,
): Promise<boolean> {
  if (merge === revision) return true;
  const cached = await deps.store.healthGate.loadContains(key, merge, revision);
  if (cached !== null) return cached;
  const contains = await commitContains(octokit, { owner: key.owner, repo: key.repo }, merge, revision);
  await deps.store.healthGate.saveContains(key, merge, revision, contains);
  return contains;
}

/** The commit where an (environment, app) started running exactly `ids` (newest history entry with them), if recorded. */
export async function landedAt(
  deps: JobDeps,
  key: RepoKey,
  environment: string,
  app: string,
  ids: readonly string[],
): Promise<{ sha: string; at: string; versions: Array<{ name: string; tag: string; digest?: string }> } | undefined> {
  const wanted = [...ids].sort().join('\n');
  const history = await deps.store.versions.loadHistory(key, environment, app);
  return history.find((entry) => entry.versions.map(versionId).sort().join('\n') === wanted);
}

/** A configuration change a promotion carries, as the health gate reads it: its app and where it landed in the source. */
export type CarriedConfig = ConfigLanding & { app: string };

/**
 * The health gate of a promotion out of `source` (undefined when `source` reports no health):
 * per app, the commit its promoted versions landed in there, the newest configuration change the
 * promotion carries for it, what the agent last reported, and whether that report is about a
 * revision containing those commits; decided by `planHealthGate`.
 */
export async function decideHealth(
  deps: JobDeps,
  index: RepoIndex,
  source: Environment | undefined,
  entries: PromotionInput['apps'],
  now: number,
  carried: readonly CarriedConfig[] = [],
): Promise<HealthGateDecision | undefined> {
  const config = source?.health;
  if (!source || !config) return undefined;
  const octokit = deps.github.forInstallation(index.installationId);
  const apps: HealthGateApp[] = [];
  for (const entry of entries) {
    const versions = [...readVersions(entry.sourceFiles).values()];
    const change = newestChange(carried.filter((candidate) => candidate.app === entry.app));
    if (versions.length === 0 && !change) continue;
    const ids = versions.map((version) =>
      versionId({ name: version.name, tag: version.tag, ...(version.digest ? { digest: version.digest } : {}) }),
    );
    const landed = versions.length > 0 ? await landedAt(deps, index, source.name, entry.app, ids) : undefined;
    const health = await loadHealth(deps, index, source.name, entry.app);
    const containsMerge =
      health && landed ? await revisionContains(deps, octokit, index, landed.sha, health.revision) : undefined;
    // The recorded revision is where the versions last changed; the commit the agent named is the
    // one that says whether the configuration change runs (a report for R is about R's tree).
    const containsConfig =
      health && change
        ? await revisionContains(deps, octokit, index, change.sha, health.reported ?? health.revision)
        : undefined;
    // What became of a rollback of this app in the source (could not be written, halted): said on the failed gate.
    const note = rollbackNote(await deps.store.rollbacks.load(index, source.name, entry.app), versions);
    apps.push({
      app: entry.app,
      running: versions.length > 0 ? runningText(entry.app, versions) : `${entry.app || 'these apps'} configuration`,
      ...(note ? { note } : {}),
      ...(landed ? { merge: { sha: landed.sha, at: landed.at } } : {}),
      ...(health ? { health } : {}),
      ...(containsMerge !== undefined ? { containsMerge } : {}),
      ...(change
        ? { config: { sha: change.sha, at: change.at, ...(change.pull !== undefined ? { pull: change.pull } : {}) } }
        : {}),
      ...(containsConfig !== undefined ? { containsConfig } : {}),
      expected: expectedSource(source, entry.app),
    });
  }
  return planHealthGate({
    source: source.name,
    apps,
    tolerateMs: parseDuration(config.tolerate),
    tolerateText: config.tolerate,
    timeoutMs: parseDuration(config.timeout),
    timeoutText: config.timeout,
    now,
  });
}

type Versions = Array<{ name: string; tag: string; digest?: string }>;

const idsOf = (versions: Versions): string =>
  versions
    .map((version) => versionId(version))
    .sort()
    .join('\n');

/**
 * What an (environment, app) goes back to on a rollback: the newest versions it ran healthy (its
 * agent reported them synced and healthy) other than its current ones, else the ones it ran before
 * its current ones; undefined when neither is recorded.
 */
export async function chooseRollback(
  deps: JobDeps,
  key: RepoKey,
  environment: string,
  app: string,
): Promise<
  { current: Versions | undefined; target: Versions; healthyUntil?: string | undefined; sha: string } | undefined
> {
  const history = await deps.store.versions.loadHistory(key, environment, app);
  const current = history[0]?.versions;
  const now = current ? idsOf(current) : '';
  const healthy = (await deps.store.healthGate.loadHealthy(key, environment, app)).find(
    (entry) => idsOf(entry.versions) !== now,
  );
  if (healthy) return { current, target: healthy.versions, healthyUntil: healthy.until, sha: healthy.sha };
  const previous = history[1];
  return previous ? { current, target: previous.versions, sha: previous.sha } : undefined;
}

/**
 * The versions an (environment, app) runs at `revision`: the newest history entry whose commit
 * `revision` contains (a report for commit X means the version of the latest commit ≤ X that
 * changed the app's files).
 */
export async function versionsAt(
  deps: JobDeps,
  key: RepoIndex,
  environment: string,
  app: string,
  revision: string,
): Promise<{ sha: string; versions: Versions } | undefined> {
  const octokit = deps.github.forInstallation(key.installationId);
  for (const entry of await deps.store.versions.loadHistory(key, environment, app))
    if (await revisionContains(deps, octokit, key, entry.sha, revision))
      return { sha: entry.sha, versions: entry.versions };
  return undefined;
}
