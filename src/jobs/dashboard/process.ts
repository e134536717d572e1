import { createHash } from 'node:crypto';
import {
  createDashboardIssue,
  findDashboardIssue,
  updateDashboardIssue,
} from '../../adapters/github/dashboard-issue.js';
import { loadBotLogin } from '../../adapters/github/repo.js';
import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import { parseDuration } from '../../config/repo-config.js';
import {
  DASHBOARD_MARKER,
  DASHBOARD_TITLE,
  renderDashboard,
  type DashboardEnvironment,
  type DashboardInput,
  type DashboardPull,
} from '../../planners/dashboard.js';
import type { AppHealth } from '../../planners/health.js';
import { parseMarker } from '../../planners/pull-marker.js';
import { versionId } from '../../planners/versions.js';
import { planWindow, windowSentence } from '../../planners/windows.js';
import type { DashboardJob } from './job.js';
import { withLease } from '../../queue/lease.js';
import type { ProcessorContext } from '../../queue/worker.js';
import type { JobDeps } from '../shared/deps.js';
import { controlInputs } from '../shared/promotion-inputs.js';

/** What the dashboard job needs beyond every job's dependencies. */
export interface DashboardDeps extends JobDeps {
  /**
   * The last health report of an app in an environment (issue 15's `HealthStore.load`); absent
   * or undefined: the dashboard says "no report".
   */
  loadHealth?: (key: RepoIndex, environment: string, app: string) => Promise<AppHealth | undefined>;
}

type Octokit = ReturnType<JobDeps['github']['forInstallation']>;

/**
 * Keep the dashboard issue of one repository current:
 * 1. read the index; no `dashboard: true` in the configuration: nothing
 * 2. gather what it shows: versions and since (index, versions store), health, soak left, holds,
 *    freezes, windows, open Escalator pull requests and their last gates, what needs a person
 * 3. render (pure) and hash the body; the same hash as the last body written: no GitHub write
 * 4. find Escalator's issue (remembered, or its bot's open issue with the marker) or open and pin it
 * 5. write the body; remember the issue and the hash
 */
export async function processDashboardJob(
  deps: DashboardDeps,
  data: DashboardJob,
  context: ProcessorContext,
): Promise<string> {
  // One render per repository at a time (a forced one may overlap a coalesced one): two renders
  // that both found no issue would open two.
  return withLease(
    deps.redis,
    `${deps.store.prefix}:lease:dashboard:${data.owner.toLowerCase()}/${data.repo.toLowerCase()}`,
    () => render(deps, data, context),
    { ttlMs: deps.leaseMs, waitMs: deps.leaseMs * 2 },
  );
}

async function render(deps: DashboardDeps, data: DashboardJob, { log }: ProcessorContext): Promise<string> {
  const index = await deps.store.subscriptions.loadRepo(data.owner, data.repo);
  if (!index?.config) {
    log.info({ repo: `${data.owner}/${data.repo}` }, 'Dashboard not rendered: no valid configuration indexed');
    return 'no configuration';
  }
  if (!index.config.dashboard) return 'dashboard off';
  const octokit = deps.github.forInstallation(data.installationId);
  const id = { owner: data.owner, repo: data.repo };
  const body = renderDashboard(await gather(deps, index, octokit));
  const hash = createHash('sha256').update(body).digest('hex');
  const known = await deps.store.dashboard.loadIssue(index);
  if (known && known.hash === hash && !data.force) return 'unchanged';

  const issue = await findDashboardIssue(octokit, id, DASHBOARD_MARKER, known?.number);
  if (!issue) {
    const created = await createDashboardIssue(octokit, id, DASHBOARD_TITLE, body);
    if (!created.pinned)
      log.warn(
        { issue: created.issue.number, reason: created.pinError },
        'Dashboard issue opened but not pinned; pin it by hand (a repository pins at most 3 issues)',
      );
    await deps.store.dashboard.saveIssue(index, { number: created.issue.number, hash });
    log.info({ issue: created.issue.number }, 'Dashboard issue opened');
    return `opened #${created.issue.number}`;
  }
  if (issue.body !== body) await updateDashboardIssue(octokit, id, issue.number, body);
  await deps.store.dashboard.saveIssue(index, { number: issue.number, hash });
  log.debug({ issue: issue.number, forced: Boolean(data.force) }, 'Dashboard issue updated');
  return issue.body !== body ? `updated #${issue.number}` : `unchanged #${issue.number}`;
}

/** The configuration changes waiting for an environment, per app (docs/configuration.md, "Promote configuration"). */
async function configWaiting(
  deps: DashboardDeps,
  index: RepoIndex,
  environment: string,
): Promise<Pick<DashboardEnvironment, 'configWaiting'>> {
  const byApp = new Map<string, { app: string; pulls: number[]; blocked: number }>();
  for (const entry of await deps.store.configChanges.list(index, environment)) {
    const app = byApp.get(entry.app) ?? { app: entry.app, pulls: [], blocked: 0 };
    app.pulls.push(entry.change.pull.number);
    if (entry.blocked) app.blocked++;
    byApp.set(entry.app, app);
  }
  const waiting = [...byApp.values()].sort((a, b) => a.app.localeCompare(b.app));
  return waiting.length > 0 ? { configWaiting: waiting } : {};
}

/** Everything the dashboard shows, as data for the pure renderer. */
async function gather(deps: DashboardDeps, index: RepoIndex, octokit: Octokit): Promise<DashboardInput> {
  const config = index.config!;
  const now = deps.now().getTime();
  // The store keeps an ended freeze a while (for the record); the dashboard shows those in force.
  const freezes = (await deps.store.freezes.loadFreezes(index, now)).filter(
    (freeze) => !freeze.until || Date.parse(freeze.until) > now,
  );
  const environments: DashboardEnvironment[] = [];
  for (const env of config.environments) {
    const apps = new Map<string, Array<{ name: string; tag: string; digest?: string }>>();
    for (const file of index.files.filter((f) => f.environment === env.name)) {
      const versions = apps.get(file.app) ?? [];
      for (const version of file.versions) if (!versions.some((v) => v.name === version.name)) versions.push(version);
      apps.set(file.app, versions);
    }
    const targets = config.environments.filter((t) => t.from === env.name && parseDuration(t.soak) > 0);
    const cells: DashboardEnvironment['cells'] = [];
    for (const [app, versions] of apps) {
      let since: string | undefined;
      for (const version of versions) {
        const seen = await deps.store.versions.loadSeen(index, env.name, app, versionId(version));
        if (seen && (!since || seen > since)) since = seen;
      }
      const health = deps.loadHealth ? await deps.loadHealth(index, env.name, app) : undefined;
      const target = targets[0];
      cells.push({
        app,
        versions,
        ...(since ? { since } : {}),
        ...(health ? { health } : {}),
        ...(target
          ? {
              soak: {
                target: target.name,
                // With health reported, soak counts from healthy-since, as the promotion's gate does.
                remainingMs: Math.max(
                  0,
                  (soakFrom(env.health !== undefined, since, health) ?? now) + parseDuration(target.soak) - now,
                ),
              },
            }
          : {}),
      });
    }
    const controls = controlInputs(env, freezes);
    const state = controls.windows ? planWindow(controls.windows, now) : undefined;
    environments.push({
      name: env.name,
      from: env.from,
      autoMerge: env.autoMerge,
      cells,
      holds: await deps.store.holds.listHolds(index, env.name),
      ...(await configWaiting(deps, index, env.name)),
      ...(state ? { window: { open: state.open, sentence: windowSentence(env.name, state) } } : {}),
    });
  }
  return {
    repository: `${index.owner}/${index.repo}`,
    environments,
    pulls: await openPulls(deps, index, octokit),
    freezes,
    attention: await deps.store.dashboard.loadAttention(index),
    now,
  };
}

/** Escalator's open pull requests (one paginated list), with the gates their promotion job last decided. */
async function openPulls(deps: DashboardDeps, index: RepoIndex, octokit: Octokit): Promise<DashboardPull[]> {
  const gates = await deps.store.dashboard.loadPulls(index);
  const bot = await loadBotLogin(octokit);
  const pulls: DashboardPull[] = [];
  for (let page = 1; page <= 20; page++) {
    const { data } = await octokit.rest.pulls.list({
      owner: index.owner,
      repo: index.repo,
      state: 'open',
      per_page: 100,
      page,
    });
    for (const pull of data) {
      const branch = pull.head.ref;
      if (
        !branch.startsWith('escalator/') ||
        pull.user?.login !== bot ||
        pull.head.repo?.full_name !== pull.base.repo.full_name
      )
        continue;
      const recorded = gates.get(branch.replace(/@\d+$/, ''));
      const marker = parseMarker(pull.body ?? '');
      const promotion = branch.startsWith('escalator/promote/');
      pulls.push({
        number: pull.number,
        title: pull.title,
        kind: promotion ? 'promote' : 'bump',
        environment: recorded?.environment ?? marker?.environment ?? '',
        app: recorded?.app ?? marker?.app ?? '',
        gates: promotion && recorded?.number === pull.number ? recorded.gates : [],
      });
    }
    if (data.length < 100) break;
  }
  return pulls.sort((a, b) => a.number - b.number);
}

/** Where an environment's soak starts: healthy-since when the environment reports health (not healthy now: not started), else the merge. */
function soakFrom(
  reportsHealth: boolean,
  since: string | undefined,
  health: AppHealth | undefined,
): number | undefined {
  if (!reportsHealth) return since ? Date.parse(since) : undefined;
  return health?.healthySince ? Math.max(Date.parse(health.healthySince), since ? Date.parse(since) : 0) : undefined;
}
