import type { RepoIndex } from '../../adapters/store/subscriptions.js';
import { parseDuration } from '../../config/repo-config.js';
import type { Freeze } from '../../planners/freeze.js';
import { planGates, type GateDecision } from '../../planners/promotion-gates.js';
import type { WindowsSpec } from '../../planners/windows.js';
import { readVersions, type EnvFile, type PromotionInput } from '../../planners/promotion-plan.js';
import { versionId } from '../../planners/versions.js';
import { enqueuePromote } from '../../queue/enqueue.js';
import type { PromoteJob } from '../../queue/enqueue.js';
import type { JobDeps } from './deps.js';
import { decideHealth, type CarriedConfig } from './health-inputs.js';
import type { AppConfigCarry } from './config-inputs.js';
import { loadFilesAt, type FileSource } from './indexed-files.js';

type Environment = NonNullable<RepoIndex['config']>['environments'][number];

/** What a promotion reads: the files of one environment and app at a commit, and its gates. Shared by the promotion job and `/escalator plan`. */
export async function loadEnvFiles(
  source: FileSource,
  environment: string,
  app: string,
  sha: string,
): Promise<EnvFile[]> {
  const paths = source.index.files.filter((f) => f.environment === environment && f.app === app).map((f) => f.path);
  return loadFilesAt(source, paths, sha);
}

/** The source versions a promotion carries (sorted version ids): what a soak is about, and what `--now` skips. */
export function promotedVersions(entries: PromotionInput['apps']): string[] {
  const ids = new Set<string>();
  for (const entry of entries)
    for (const version of readVersions(entry.sourceFiles).values())
      ids.add(
        versionId({ name: version.name, tag: version.tag, ...(version.digest ? { digest: version.digest } : {}) }),
      );
  return [...ids].sort();
}

/**
 * The gates of promoting `entries` from `target.from` into `target` (app `''`: grouped): whether
 * the source runs them healthy (when it reports health), when it first ran or ran healthy each
 * version (soak), a hold, a skipped soak; decided by `planHealthGate` and `planGates`.
 */
export async function decideGates(
  deps: JobDeps,
  index: RepoIndex,
  target: Environment,
  app: string,
  entries: PromotionInput['apps'],
  options: {
    rollback: boolean;
    now: number;
    freezeLifted?: boolean;
    /**
     * The configuration changes the promotion carries (`carriedConfig`): soak counts from their
     * landing too, and the source's health must be reported at or after the newest one's merge.
     */
    carried?: CarriedConfig[];
  },
): Promise<GateDecision & { healthLines?: string[] }> {
  const source = target.from;
  const soakMs = parseDuration(target.soak);
  const firstSeen: Array<string | undefined> = [];
  let soakSkippedBy: string | undefined;
  if (soakMs > 0 && !options.rollback) {
    for (const entry of entries) {
      for (const version of readVersions(entry.sourceFiles).values()) {
        const id = versionId({
          name: version.name,
          tag: version.tag,
          ...(version.digest ? { digest: version.digest } : {}),
        });
        firstSeen.push((await deps.store.versions.loadSeen(index, source, entry.app, id)) ?? undefined);
      }
    }
    soakSkippedBy =
      (await deps.store.holds.loadSoakSkip(index, target.name, app, promotedVersions(entries))) ?? undefined;
  }
  const hold = (await deps.store.holds.loadHold(index, target.name, app)) ?? undefined;
  // Health of the source (when it reports it): a gate of its own, and soak counted from healthy-since.
  const health = options.rollback
    ? undefined
    : await decideHealth(
        deps,
        index,
        index.config?.environments.find((env) => env.name === source),
        entries,
        options.now,
        options.carried,
      );
  const configLanded = (options.carried ?? []).map((change) => change.at);
  const decision = planGates({
    source,
    target: target.name,
    soakMs,
    soakText: target.soak,
    rollback: options.rollback,
    firstSeen,
    ...(configLanded.length ? { configLanded } : {}),
    hold,
    soakSkippedBy,
    health,
    ...controlInputs(target, await deps.store.freezes.loadFreezes(index, options.now), options.freezeLifted),
    now: options.now,
  });
  return health ? { ...decision, healthLines: health.lines } : decision;
}

/** The configuration changes carried (outcome `carried`) of a promotion's apps, as the gates read them. */
export function carriedConfig(carries: ReadonlyArray<AppConfigCarry | undefined>): CarriedConfig[] {
  return carries.flatMap((carry) =>
    (carry?.changes ?? [])
      .filter((change) => change.outcome === 'carried')
      .map((change) => ({
        app: carry?.app ?? '',
        sha: change.change.mergeSha,
        at: change.change.landedAt,
        pull: change.change.pull.number,
      })),
  );
}

/** The windows and freezes of a target as the gate planner reads them (docs/controls.md). */
export function controlInputs(
  target: Environment,
  freezes: Freeze[],
  freezeLifted = false,
): { windows?: WindowsSpec; freezes: Freeze[]; freezeLifted: boolean } {
  const windows = target.windows
    ? {
        allow: target.windows.allow.map((w) => ({ cron: w.cron, durationMs: parseDuration(w.duration), zone: w.zone })),
        deny: target.windows.deny.map((w) => ({ cron: w.cron, durationMs: parseDuration(w.duration), zone: w.zone })),
      }
    : undefined;
  return { ...(windows ? { windows } : {}), freezes, freezeLifted };
}

/**
 * Plan again every promotion out of `environment` for `app` (a grouped target plans all its apps
 * at once), one job per cause `key`; `only` narrows the targets. Returns the target environments.
 * Shared by the index (a merge changed what runs; the first index, where a target runs other
 * versions) and the health loop (what runs changed health).
 */
export async function enqueuePromotionsOutOf(
  deps: Pick<JobDeps, 'producer'>,
  index: RepoIndex,
  environment: string,
  app: string,
  reason: PromoteJob['reason'],
  key: string,
  only: (target: string) => boolean = () => true,
): Promise<string[]> {
  const targets = index.config?.environments.filter((env) => env.from === environment && only(env.name)) ?? [];
  for (const target of targets)
    await enqueuePromote(
      deps.producer,
      {
        installationId: index.installationId,
        owner: index.owner,
        repo: index.repo,
        environment: target.name,
        app: target.group ? '' : app,
        reason,
      },
      key,
    );
  return targets.map((target) => target.name);
}
