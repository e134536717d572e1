import { isSecret } from './normalize.js';
import type { DiffReport, DiffSummary, TargetDiff, TargetReach } from './types.js';

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Assemble the report from per-target diffs: sorted targets, totals, every alert and image change. */
export function buildReport(input: {
  baseSha: string;
  headSha: string;
  targets: TargetDiff[];
  notes?: string[];
  reach?: TargetReach[];
}): DiffReport {
  const targets = [...input.targets].sort((a, b) => compare(a.id, b.id));
  const summary: DiffSummary = {
    targetsChecked: targets.length,
    targetsChanged: 0,
    targetsUnchanged: 0,
    targetsFailed: 0,
    targetsNotRendered: 0,
    added: 0,
    changed: 0,
    removed: 0,
    renamed: 0,
    recreated: 0,
    secretsChanged: 0,
    failures: 0,
  };
  for (const target of targets) {
    if (target.status === 'changed') summary.targetsChanged++;
    else if (target.status === 'unchanged') summary.targetsUnchanged++;
    else if (target.status === 'not-rendered') summary.targetsNotRendered++;
    else summary.targetsFailed++;
    if (target.failure && target.failure.side !== 'base') summary.failures++;
    summary.added += target.counts.added;
    summary.changed += target.counts.changed;
    summary.removed += target.counts.removed;
    summary.renamed += target.counts.renamed;
    summary.recreated += target.counts.recreated;
    summary.secretsChanged += target.objects.filter(
      (object) => isSecret(object) && (object.change !== 'changed' || (object.secretKeys?.length ?? 0) > 0),
    ).length;
  }
  const alerts = targets.flatMap((target) => target.alerts);
  // Cautions first, then warnings; within a level, in target order.
  alerts.sort((a, b) => (a.level === b.level ? 0 : a.level === 'caution' ? -1 : 1));
  return {
    version: 1,
    baseSha: input.baseSha,
    headSha: input.headSha,
    targets,
    summary,
    alerts,
    images: targets.flatMap((target) => target.images),
    notes: input.notes ?? [],
    ...(input.reach ? { reach: [...input.reach].sort((a, b) => compare(a.id, b.id)) } : {}),
  };
}

/**
 * The JSON form printed by `escalator diff --format json`: the report without run statistics
 * (which are not deterministic) and without the reach of each target (the graph, not the
 * diff). Secret values are not in the report to begin with.
 */
export function toJsonReport(report: DiffReport): string {
  const { stats: _stats, reach: _reach, ...rest } = report;
  return `${JSON.stringify(rest, null, 2)}\n`;
}

/** Said on a target that renders Argo CD Applications (an app of apps), which Escalator does not follow. */
export const APP_OF_APPS_NOTE =
  'This target renders Argo CD Applications (app of apps): the diff shows how those Application objects change, not what they deploy; Escalator does not follow them.';

/**
 * The target with the app-of-apps note when a chart or kustomization it renders holds Argo CD
 * Applications or ApplicationSets that change: what they deploy is not rendered from here
 * (docs/diff.md, "What is not rendered").
 */
export function withAppOfAppsNote(target: TargetDiff): TargetDiff {
  if (target.kind === 'plain' || target.notes.includes(APP_OF_APPS_NOTE)) return target;
  const renders = target.objects.some(
    (object) => object.group === 'argoproj.io' && (object.kind === 'Application' || object.kind === 'ApplicationSet'),
  );
  return renders ? { ...target, notes: [...target.notes, APP_OF_APPS_NOTE] } : target;
}
