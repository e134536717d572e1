import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  createComment,
  ensureCheckRun,
  listComments,
  loadBotLogin,
  loadPull,
  updateComment,
} from '../../adapters/github/repo.js';
import { loadTarballTree } from '../../adapters/github/tarball-tree.js';
import {
  changedPathsBetween,
  installationCacheDir,
  renderAndDiff,
  type RenderIsolationMode,
  type SourceTree,
} from '../../adapters/render/index.js';
import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import { planDrift, renderDrift, type DriftTarget } from '../../planners/drift.js';
import { planEnvironmentFiles } from '../../planners/environment-files.js';
import { configPath, parseDuration, parseRepoConfig } from '../../config/repo-config.js';
import { isEscalatorPromotion, type PullOrigin } from '../../planners/pull-marker.js';
import { loadRequiredChecks, type RequiredChecks } from '../../adapters/github/gates.js';
import { gateChecks, gateEnforcement } from '../../planners/promotion-gates.js';
import { freezesInForce } from '../../planners/freeze.js';
import { controlInputs } from '../shared/promotion-inputs.js';
import { enforcementLines } from '../../planners/promotion-plan.js';
import { passGatesOfOtherPull } from './pull-gates.js';
import { targetKey, versionsByTarget } from '../../planners/versions.js';
import { renderConfigCheck } from '../../planners/config-check.js';
import { renderDuration } from '../../observability/metrics.js';
import {
  DIFF_COMMENT_MARKER,
  planSharedChange,
  reachEnvironments,
  renderCheckSummary,
  renderComment,
  type DiffReport,
  type SharedChange,
} from '../../planners/diff/index.js';
import type { DiffJob } from './job.js';
import type { ProcessorContext } from '../../queue/worker.js';
import type { JobDeps } from '../shared/deps.js';
import { loadIndexOrRequest } from '../shared/repo-lease.js';

export type DiffOutcome =
  'commented' | 'updated' | 'unchanged' | 'no-targets' | 'stale' | 'skipped-fork' | 'disabled' | 'closed';

/**
 * A pull request that changes `.github/escalator.yml` gets an `escalator/config` check: every
 * problem with file:line:col, so an invalid config never lands silently.
 */
async function checkConfigChange(
  octokit: Parameters<typeof ensureCheckRun>[0],
  id: { owner: string; repo: string },
  sha: string,
  base: SourceTree,
  head: SourceTree,
): Promise<void> {
  const read = (tree: SourceTree): string | null => {
    try {
      return tree.read(configPath).toString('utf8');
    } catch {
      return null;
    }
  };
  const after = read(head);
  if (after === null || after === read(base)) return;
  const check = renderConfigCheck(parseRepoConfig(after, configPath), configPath);
  await ensureCheckRun(octokit, id, sha, 'escalator/config', { status: 'completed', ...check });
}

/** The warning of a promotion pull request (`escalator/promote/<env>…`) whose gates the base branch does not require. */
async function promotionGateNote(
  deps: JobDeps,
  index: RepoIndex,
  headRef: string,
  baseRef: string,
  required: RequiredChecks,
): Promise<string[]> {
  const environment = /^escalator\/promote\/([^/@]+)/.exec(headRef)?.[1];
  const env = index.config?.environments.find((e) => e.name === environment);
  if (!env || env.from === 'registry') return [];
  // The same checks as the promotion's own body names (gateChecks, enforcedGates).
  const source = index.config?.environments.find((e) => e.name === env.from);
  const now = Date.now();
  const gates = gateChecks({
    sourceReportsHealth: Boolean(source?.health),
    soakMs: parseDuration(env.soak),
    windows: controlInputs(env, []).windows,
    freezeInForce: freezesInForce(await deps.store.freezes.loadFreezes(index, now), env.name, now).length > 0,
  });
  return enforcementLines(gateEnforcement(required, baseRef, gates));
}

/**
 * The environments a pull request reaches at once through a file they share (issue 33.5), with
 * the gates of the default branch's configuration it skips; never on Escalator's own promotions.
 */
async function sharedChangeOf(
  octokit: Parameters<typeof loadBotLogin>[0],
  index: RepoIndex,
  pull: PullOrigin,
  repository: string,
  report: DiffReport,
  head: SourceTree,
): Promise<SharedChange | undefined> {
  const config = index.config;
  if (!config) return undefined;
  const change = planSharedChange({
    report,
    environments: reachEnvironments(config.environments),
    files: head.listFiles(),
  });
  // Who opened it is asked only when there is something to say, of a branch that can be a promotion.
  if (
    change &&
    pull.head.ref.startsWith('escalator/promote/') &&
    isEscalatorPromotion(pull, repository, await loadBotLogin(octokit))
  )
    return undefined;
  return change;
}

/**
 * On a pull request that touches an environment promoted from another one, report the versions
 * it sets that never ran in the source environment (escalator/drift).
 */
async function checkDrift(
  deps: JobDeps,
  index: RepoIndex,
  octokit: Parameters<typeof ensureCheckRun>[0],
  id: { owner: string; repo: string },
  sha: string,
  head: SourceTree,
  changed: readonly string[],
): Promise<void> {
  const config = index.config;
  if (!config) return;
  const targets: DriftTarget[] = [];
  for (const env of config.environments) {
    if (env.from === 'registry') continue;
    const owned = planEnvironmentFiles({ environments: [env] }, head.listFiles());
    const touchedApps = new Set(owned.filter((file) => changed.includes(file.path)).map((file) => file.app));
    for (const app of touchedApps) {
      const history = await deps.store.versions.loadHistory(index, env.from, app);
      const sourceVersions = [
        ...(versionsByTarget(index.files).get(targetKey(env.from, app)) ?? []),
        ...history.flatMap((entry) => entry.versions),
      ];
      const files = owned
        .filter((file) => file.app === app)
        .map((file) => ({ path: file.path, text: head.read(file.path).toString('utf8') }));
      targets.push({ environment: env.name, from: env.from, app, files, sourceVersions });
    }
  }
  if (targets.length === 0) return;
  const drift = renderDrift(planDrift(targets));
  await ensureCheckRun(octokit, id, sha, 'escalator/drift', { status: 'completed', ...drift });
}

/**
 * The rendered diff of one pull request:
 * 1. skip closed PRs, stale heads, forks (unless allowed) and repositories that turned it off
 * 2. fetch base and head (the merge commit when GitHub has one) as tarballs, cached by SHA
 * 3. render the affected targets at both and diff them per object; name the environments a
 *    shared base reaches at once
 * 4. keep one sticky comment: created once, edited only when the body changes, never written
 *    for a head that is no longer the PR's head
 * 5. a check run `escalator/diff` with the same summary; it fails when head fails to render
 */
export async function processDiffJob(
  deps: JobDeps & { cacheDir?: string; appId?: number; renderIsolation?: RenderIsolationMode },
  data: DiffJob,
  { log }: ProcessorContext,
): Promise<DiffOutcome> {
  const index = await loadIndexOrRequest(deps, data, 'diff');
  const diffConfig = index.config?.diff ?? { enabled: true, forks: false, paths: [] };
  const octokit = deps.github.forInstallation(data.installationId);
  const id = { owner: data.owner, repo: data.repo };
  const pull = await loadPull(octokit, id, data.number);
  if (pull.state !== 'open') return 'closed';
  if (pull.head.sha !== data.headSha) return 'stale';
  // Whatever is rendered: a branch that requires Escalator's gates holds every pull request to them.
  const sameRepository = pull.head.repo?.full_name === pull.base.repo.full_name;
  const required = await loadRequiredChecks(octokit, id, pull.base.ref);
  await passGatesOfOtherPull(
    octokit,
    id,
    { number: data.number, baseRef: pull.base.ref, headRef: pull.head.ref, headSha: pull.head.sha, sameRepository },
    log,
    required,
  );
  if (!diffConfig.enabled) return 'disabled';
  if (pull.head.repo?.full_name !== pull.base.repo.full_name && !diffConfig.forks) {
    log.info({ pr: data.number }, 'Fork pull request not rendered (diff.forks is false)');
    return 'skipped-fork';
  }
  const useMerge = Boolean(pull.mergeable && pull.merge_commit_sha);
  const headRef = useMerge ? (pull.merge_commit_sha as string) : pull.head.sha;
  // One folder per installation, named by an HMAC no other tenant can compute (issue 22).
  const cacheDir = installationCacheDir(deps.cacheDir ?? join(tmpdir(), 'escalator-cache'), data.installationId);
  const [base, head] = await Promise.all([
    loadTarballTree(octokit, id, pull.base.sha, cacheDir),
    loadTarballTree(octokit, id, headRef, cacheDir),
  ]);
  // Tarball trees carry no blob ids, so the changed paths are computed here once (by content), for
  // the diff and for drift: the App renders only the targets the pull request's files reach, as
  // `escalator diff` does.
  const changed = changedPathsBetween(base, head);
  const timer = renderDuration.startTimer({ tool: 'pull-request' });
  const report = await renderAndDiff({
    base,
    head,
    changedPaths: changed,
    targets: diffConfig.paths,
    options: { cacheDir: join(cacheDir, 'render'), isolation: deps.renderIsolation ?? 'namespace' },
  });
  timer({ outcome: report.summary.failures > 0 ? 'failed' : 'ok' });
  // On a promotion, the reviewer reads here too whether GitHub holds the merge to its gates.
  const gateNote = sameRepository ? await promotionGateNote(deps, index, pull.head.ref, pull.base.ref, required) : [];
  // A change to a base several environments render reaches them all at once: said at the top.
  const sharedChange = await sharedChangeOf(octokit, index, pull, `${data.owner}/${data.repo}`, report, head);
  const body =
    renderComment(report, {
      baseSha: pull.base.sha,
      headSha: headRef,
      mergeCommit: useMerge,
      pull: { number: data.number, headSha: pull.head.sha },
      repository: `${data.owner}/${data.repo}`,
      ...(gateNote.length ? { maxChars: 64_000 } : {}),
      ...(sharedChange ? { sharedChange } : {}),
    }) + (gateNote.length ? `\n${gateNote.join('\n')}\n` : '');

  const comments = await listComments(octokit, id, data.number);
  const ours = comments.find(
    (comment) =>
      comment.body?.startsWith(DIFF_COMMENT_MARKER) &&
      comment.user?.type === 'Bot' &&
      (deps.appId === undefined ||
        comment.performed_via_github_app?.id === undefined ||
        comment.performed_via_github_app.id === deps.appId),
  );
  let outcome: DiffOutcome;
  if (report.summary.targetsChecked === 0 && !ours) outcome = 'no-targets';
  else if (ours?.body === body) outcome = 'unchanged';
  else {
    // Never let a slow run for an older head overwrite the comment of a newer one.
    const fresh = await loadPull(octokit, id, data.number);
    if (fresh.head.sha !== data.headSha) return 'stale';
    if (ours) await updateComment(octokit, id, ours.id, body);
    else await createComment(octokit, id, data.number, body);
    outcome = ours ? 'updated' : 'commented';
  }
  await checkConfigChange(octokit, id, data.headSha, base, head);
  await checkDrift(deps, index, octokit, id, data.headSha, head, changed);
  const check = renderCheckSummary(report);
  await ensureCheckRun(octokit, id, data.headSha, 'escalator/diff', {
    status: 'completed',
    conclusion: check.conclusion,
    title: check.title,
    summary: check.summary,
  });
  log.info(
    { pr: data.number, outcome, targets: report.summary.targetsChecked, failures: report.summary.failures },
    'Rendered diff done',
  );
  return outcome;
}
