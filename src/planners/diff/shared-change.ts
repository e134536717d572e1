import { code } from '../markdown.js';
import { compilePathPattern } from '../path-pattern.js';
import { dirname } from '../repo-path.js';
import { kustomizationFile } from './targets.js';
import type { TargetDiff, TargetNode, TargetReach } from './types.js';

/**
 * Shared bases (issue 33, item 5): a pull request that changes a file several environments render
 * — a kustomize base, a component, a chart's templates — reaches all of them at once when it
 * merges, without going through promotion. The sticky diff comment says so at the top, naming the
 * environments it reaches and the gates of theirs it skips (promotion, health, soak, reviewers).
 *
 * Which environments render a changed file comes from the diff's own graph: the targets it
 * renders, the changed paths each reads (`TargetReach`), and the environments whose `paths` hold
 * each target. A target whose render does not change (a comment in a base, a field every overlay
 * patches) is not reached; a file inside an environment's paths that a reached target reads
 * reaches that environment too (an overlay another environment builds on is no target of its
 * own). A file is *shared* when it reaches two environments or more; a change to one
 * environment's own folder, or to a base only one environment uses, is not.
 */

const KUSTOMIZATION = /(^|\/)(kustomization\.ya?ml|Kustomization)$/;

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

/**
 * Where a target lives, for matching environments' paths, and the changed paths that reach it
 * (`AffectedTargets.targets[].reads`). A release's id (`argocd:<name>`) is no path: the
 * Application or HelmRelease file that defines it is.
 */
export function targetReach(node: TargetNode, reads: readonly string[]): TargetReach {
  const at = new Set<string>();
  if (!node.release) at.add(node.id);
  if (node.file) at.add(node.file);
  if (node.kind === 'kustomize')
    for (const file of node.inputFiles) if (dirname(file) === node.dir && KUSTOMIZATION.test(file)) at.add(file);
  for (const file of node.valuesFiles ?? []) at.add(file);
  if (node.release) {
    at.add(node.release.source);
    for (const file of node.release.valuesFiles) at.add(file);
  }
  return { id: node.id, at: [...at].sort(compare), reads: [...reads].sort(compare) };
}

/** What the comment needs of one environment of the repository configuration. */
export interface ReachEnvironment {
  name: string;
  /** Its `paths` patterns (docs/configuration.md, "Paths"). */
  paths: readonly string[];
  /** The environment it promotes from; absent for `from: registry`. */
  from?: string;
  /** Its soak as written, when it is more than nothing. */
  soak?: string;
  reviewers: readonly string[];
  /** It reports health (`health:`): promotions out of it wait until it runs the version healthy. */
  health: boolean;
}

/** What of the repository configuration's environments `reachEnvironments` reads. */
export interface ConfiguredEnvironment {
  name: string;
  paths: readonly string[];
  /** `registry`, or the environment it promotes from. */
  from: string;
  /** A checked duration (`1h30m`, `0s`). */
  soak?: string;
  reviewers?: readonly string[];
  health?: unknown;
}

/**
 * The configuration's environments as the shared-change planner reads them: `from: registry` is
 * no promotion, and a soak whose every number is 0 is none (durations are checked when the
 * configuration is read: digits and units only).
 */
export function reachEnvironments(environments: readonly ConfiguredEnvironment[]): ReachEnvironment[] {
  return environments.map((environment) => ({
    name: environment.name,
    paths: environment.paths,
    ...(environment.from !== 'registry' ? { from: environment.from } : {}),
    ...(environment.soak !== undefined && /[1-9]/.test(environment.soak) ? { soak: environment.soak } : {}),
    reviewers: environment.reviewers ?? [],
    health: environment.health !== undefined,
  }));
}

/** The gates of one environment that a change reaching it at once does not pass. */
export interface SkippedGates {
  environment: string;
  /** The promotion from this environment. */
  from?: string;
  /** The promotion waits for `from` to run the version healthy. */
  health?: boolean;
  soak?: string;
  reviewers: string[];
}

/** A change that reaches several environments at once. */
export interface SharedChange {
  /** The environments it reaches, in the configuration's order. */
  environments: string[];
  /** What the shared files are named by: the kustomization or chart folder holding each, else the file; sorted. */
  through: string[];
  /** Among `environments`, those with gates the change skips, in the configuration's order. */
  skips: SkippedGates[];
}

export interface SharedChangeInput {
  /** The diff's report, or what of it this reads: each target's status, and the reach of each. */
  report: { targets: ReadonlyArray<Pick<TargetDiff, 'id' | 'status'>>; reach?: readonly TargetReach[] };
  environments: readonly ReachEnvironment[];
  /** The head commit's files: a shared file is named by the kustomization or chart folder that holds it. */
  files?: readonly string[];
}

/** The kustomization or chart folder nearest above `path`, or the path itself when there is none. */
function holder(path: string, files: ReadonlySet<string> | undefined): string {
  if (!files) return path;
  for (let dir = dirname(path); ; dir = dirname(dir)) {
    if (kustomizationFile(files, dir) !== undefined || files.has(dir === '' ? 'Chart.yaml' : `${dir}/Chart.yaml`))
      return dir === '' ? '.' : dir;
    if (dir === '') return path;
  }
}

/**
 * Which environments a change reaches at once, or undefined when it reaches fewer than two through
 * any one file (a change to one environment's own folder, files no target of an environment reads,
 * renders that do not change, or changed paths that are not known).
 */
export function planSharedChange(input: SharedChangeInput): SharedChange | undefined {
  const reach = input.report.reach;
  if (!reach || input.environments.length === 0) return undefined;
  const status = new Map(input.report.targets.map((target) => [target.id, target.status]));
  const patterns = input.environments.map((environment) => environment.paths.map((path) => compilePathPattern(path)));
  /** Changed path → the environments whose changing targets read it. */
  const readers = new Map<string, Set<number>>();
  for (const target of reach) {
    // A target missing from the report holds no object on either side; one that renders the same is not reached.
    const seen = status.get(target.id);
    if (seen === undefined || seen === 'unchanged') continue;
    const owners = patterns.flatMap((compiled, index) =>
      compiled.some((pattern) => target.at.some((path) => pattern.match(path) !== null)) ? [index] : [],
    );
    if (owners.length === 0) continue;
    for (const path of target.reads) {
      const set = readers.get(path) ?? new Set<number>();
      for (const owner of owners) set.add(owner);
      readers.set(path, set);
    }
  }
  // A file inside an environment's paths reaches that environment too: its folder is deployed as
  // it is even when another environment's overlay builds on it (and so renders it as no target of its own).
  for (const [path, set] of readers)
    patterns.forEach((compiled, index) => {
      if (compiled.some((pattern) => pattern.match(path) !== null)) set.add(index);
    });
  const shared = [...readers].filter(([, owners]) => owners.size >= 2);
  if (shared.length === 0) return undefined;
  const reached = new Set(shared.flatMap(([, owners]) => [...owners]));
  const files = input.files ? new Set(input.files) : undefined;
  const environments = input.environments.filter((_, index) => reached.has(index));
  const byName = new Map(input.environments.map((environment) => [environment.name, environment]));
  const skips: SkippedGates[] = [];
  for (const environment of environments) {
    const gates: SkippedGates = { environment: environment.name, reviewers: [...environment.reviewers] };
    if (environment.from !== undefined) {
      gates.from = environment.from;
      if (byName.get(environment.from)?.health) gates.health = true;
    }
    if (environment.soak !== undefined) gates.soak = environment.soak;
    if (gates.from !== undefined || gates.soak !== undefined || gates.reviewers.length > 0) skips.push(gates);
  }
  return {
    environments: environments.map((environment) => environment.name),
    through: [...new Set(shared.map(([path]) => holder(path, files)))].sort(compare),
    skips,
  };
}

const MAX_THROUGH = 5;
const MAX_REVIEWERS = 5;

/** A list in words: `a`, `a and b`, `a, b and c`. */
function listed(items: readonly string[], last = ' and '): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')}${last}${items.at(-1) as string}`;
}

/** Environment names and durations as the configuration checks them read as they are; anything else is a code span. */
function word(text: string): string {
  return /^[A-Za-z0-9][A-Za-z0-9_-]*$/.test(text) ? text : code(text);
}

function capped(items: readonly string[], max: number, what: string): string[] {
  const shown = items.slice(0, max);
  return items.length > max ? [...shown, `${items.length - max} more ${what}`] : shown;
}

function skippedWords(gates: SkippedGates): string {
  const items: string[] = [];
  if (gates.from !== undefined) items.push(`promotion from ${word(gates.from)}`);
  if (gates.health) items.push(`health gate on ${word(gates.from ?? '')}`);
  if (gates.soak !== undefined) items.push(`soak (${word(gates.soak)})`);
  if (gates.reviewers.length > 0) {
    // Code spans: a team named here is not mentioned (notified) on every pull request.
    const names = capped(
      gates.reviewers.map((reviewer) => code(reviewer)),
      MAX_REVIEWERS,
      'reviewers',
    );
    items.push(`${gates.reviewers.length === 1 ? 'reviewer' : 'reviewers'} (${listed(names)})`);
  }
  return `${word(gates.environment)}'s ${listed(items)}`;
}

/**
 * The callout at the top of the sticky comment: `WARNING` when the change skips some
 * environment's gates, `NOTE` when none of them has any.
 *
 * > [!WARNING]
 * > **This change reaches dev, staging and prod at once** through `apps/hello/base`: it skips
 * > staging's promotion from dev and soak (1h), and prod's promotion from staging and reviewer (`@example/release-managers`).
 */
export function renderSharedChange(change: SharedChange): string {
  const through = capped(
    change.through.map((path) => code(path)),
    MAX_THROUGH,
    'paths',
  );
  const reaches = `**This change reaches ${listed(change.environments.map(word))} at once** through ${listed(through)}`;
  if (change.skips.length === 0) return `> [!NOTE]\n> ${reaches}.`;
  return `> [!WARNING]\n> ${reaches}: it skips ${listed(change.skips.map(skippedWords), ', and ')}.`;
}
