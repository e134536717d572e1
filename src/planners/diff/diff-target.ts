import { identityKey, parseManifests, type ManifestObject } from './manifest.js';
import { normalizeObject, type NormalizedObject } from './normalize.js';
import { diffLines } from './object-diff.js';
import { pairObjects } from './pairing.js';
import { describeRandom, settleRandomness } from './random.js';
import { changeAlerts, deletionLoss, removalAlerts } from './risk.js';
import { renderPlain } from './plain.js';
import { scrubText, secretStringsFromObjects, secretStringsFromSources } from './scrub.js';
import type {
  Alert,
  ImageChange,
  ObjectChange,
  RandomObject,
  RenderFailure,
  RenderOutcome,
  Target,
  TargetCounts,
  TargetDiff,
  TargetNode,
} from './types.js';
import { compareSecretKeys, diffValuesFiles, valuesImageChanges } from './values.js';
import { imageChanges, rollsOut } from './workloads.js';

export interface DiffTargetOptions {
  /** Secret values to scrub from failure messages and notes. */
  secrets?: Iterable<string>;
  /** Cut failure messages to this many characters. @default 2000 */
  maxMessageLength?: number;
  /** Lines longer than this are shortened in diffs. @default 200 */
  maxLineLength?: number;
  /** Context lines in hunks. @default 3 */
  context?: number;
}

interface Normalized extends ManifestObject {
  normalized: NormalizedObject;
}

type SideResult =
  | { state: 'absent' }
  | { state: 'ok'; objects: Normalized[]; notes: string[]; random: RandomObject[] }
  | { state: 'failed'; message: string }
  | { state: 'values'; tool: string; message: string; values: Array<{ path: string; text: string }> };

function clip(text: string, max: number): string {
  const trimmed = text.trim();
  return trimmed.length <= max ? trimmed : `${trimmed.slice(0, max)}… (${trimmed.length - max} more characters)`;
}

function side(outcome: RenderOutcome, maxLineLength: number): SideResult {
  if (outcome.status === 'absent') return { state: 'absent' };
  if (outcome.status === 'failed') return { state: 'failed', message: outcome.message };
  if (outcome.status === 'tool-missing') {
    if (outcome.values)
      return { state: 'values', tool: outcome.tool, message: outcome.message, values: outcome.values };
    return { state: 'failed', message: outcome.message };
  }
  const parsed = parseManifests(outcome.yaml);
  if (!parsed.ok) return { state: 'failed', message: `the rendered output is not valid YAML: ${parsed.message}` };
  const notes = [...(outcome.notes ?? [])];
  if (parsed.duplicates.length > 0) notes.push(`rendered twice, first kept: ${parsed.duplicates.join(', ')}`);
  let objects = parsed.objects;
  let random: RandomObject[] = [];
  if (outcome.again !== undefined) {
    // Two renders of the same inputs: what differs between them is random, never a change (issue 36).
    const again = parseManifests(outcome.again);
    if (!again.ok) return { state: 'failed', message: `the second render is not valid YAML: ${again.message}` };
    ({ objects, random } = settleRandomness(parsed.objects, again.objects));
  }
  return {
    state: 'ok',
    objects: objects.map((object) => ({ ...object, normalized: normalizeObject(object, { maxLineLength }) })),
    notes,
    random,
  };
}

/** Head's random objects, then base's that head does not have, in one order. */
function mergeRandom(base: RandomObject[], head: RandomObject[]): RandomObject[] {
  const key = (entry: RandomObject): string =>
    JSON.stringify([entry.source, entry.group, entry.kind, entry.namespace, entry.name ?? '', entry.what]);
  const seen = new Set(head.map(key));
  const all = [...head, ...base.filter((entry) => !seen.has(key(entry)))];
  return all.sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}

function emptyCounts(): TargetCounts {
  return { added: 0, changed: 0, removed: 0, renamed: 0, recreated: 0, unchanged: 0 };
}

function refOf(object: ManifestObject): { group: string; kind: string; namespace: string; name: string } {
  return { group: object.group, kind: object.kind, namespace: object.namespace, name: object.name };
}

function compareChanges(a: ObjectChange, b: ObjectChange): number {
  const left = identityKey(a);
  const right = identityKey(b);
  return left < right ? -1 : left > right ? 1 : 0;
}

/**
 * The diff of a target whose renders could not be compared (the diff ran out of time or memory):
 * failed, so it is never mistaken for "unchanged", and said at the top of the comment.
 */
export function stoppedDiff(target: Target, presence: TargetDiff['presence'], reason: string): TargetDiff {
  return {
    id: target.id,
    kind: target.kind,
    status: 'failed',
    presence,
    failure: { side: 'diff', breaks: false, message: reason },
    notes: [],
    objects: [],
    counts: emptyCounts(),
    images: [],
    alerts: [
      { level: 'caution', kind: 'render-failure', target: target.id, detail: `rendered, but not diffed: ${reason}` },
    ],
  };
}

/** A target Escalator did not render (the run's cap on targets): "not rendered", with why. */
export function notRenderedDiff(target: Target, presence: TargetDiff['presence'], reason: string): TargetDiff {
  return {
    id: target.id,
    kind: target.kind,
    status: 'not-rendered',
    presence,
    notRendered: reason,
    notes: [],
    objects: [],
    counts: emptyCounts(),
    images: [],
    alerts: [],
  };
}

/**
 * Diff one target's base and head renders. A side that failed makes the target `failed` (with the
 * scrubbed message); a failure only at head is "this PR breaks it". When the renderer's tool is
 * missing and values files were supplied, the diff is the structural diff of those files.
 */
export function diffTarget(
  target: Target,
  baseOutcome: RenderOutcome,
  headOutcome: RenderOutcome,
  options: DiffTargetOptions = {},
): TargetDiff {
  const maxLineLength = options.maxLineLength ?? 200;
  const maxMessage = options.maxMessageLength ?? 2000;
  const secrets = [...(options.secrets ?? [])];
  const clean = (text: string): string => clip(scrubText(text, secrets), maxMessage);
  const base = side(baseOutcome, maxLineLength);
  const head = side(headOutcome, maxLineLength);
  const presence = base.state === 'absent' ? 'added' : head.state === 'absent' ? 'removed' : 'both';
  const result: TargetDiff = {
    id: target.id,
    kind: target.kind,
    status: 'unchanged',
    presence,
    notes: [],
    objects: [],
    counts: emptyCounts(),
    images: [],
    alerts: [],
  };

  // A pull request that fixes a target (base fails, head renders) shows what it will deploy: head's
  // objects, diffed against nothing, with the base failure kept as a note. Every other failure stops here.
  const fixes = base.state === 'failed' && head.state === 'ok';
  if ((base.state === 'failed' && !fixes) || head.state === 'failed') {
    const failure: RenderFailure =
      base.state === 'failed' && head.state === 'failed'
        ? { side: 'both', breaks: false, message: clean(head.message) }
        : head.state === 'failed'
          ? // A new target that fails: not "this PR breaks it" (nothing rendered before), but it fails all the same.
            { side: 'head', breaks: presence !== 'added', message: clean(head.message) }
          : { side: 'base', breaks: false, message: clean((base as { message: string }).message) };
    result.status = 'failed';
    result.failure = failure;
    if (failure.side !== 'base') {
      result.alerts.push({
        level: 'caution',
        kind: 'render-failure',
        target: target.id,
        detail:
          failure.side === 'both'
            ? 'fails to render at base and at head'
            : failure.breaks
              ? 'renders at base but fails at head: this PR breaks it'
              : 'new target fails to render',
      });
    }
    return result;
  }
  if (fixes) {
    result.failure = { side: 'base', breaks: false, message: clean((base as { message: string }).message) };
    result.notes.push('This target did not render at base, so every object it renders at head is shown as added.');
  }

  if (base.state === 'values' || head.state === 'values') {
    // Escalator could not look: whatever the values files say, the target is "not rendered", never
    // "unchanged" (a template, Chart.yaml or dependency change shows in no values file).
    const tool = base.state === 'values' ? base.tool : (head as { tool: string }).tool;
    const message = base.state === 'values' ? base.message : (head as { message: string }).message;
    result.status = 'not-rendered';
    result.notRendered = `${tool} is not installed where Escalator renders`;
    result.notes.push(clean(message));
    const values = (state: SideResult): Array<{ path: string; text: string }> =>
      state.state === 'values' ? state.values : [];
    result.values = diffValuesFiles(values(base), values(head));
    // Images bumped through the values are in the image table even though the chart was not rendered.
    result.images = valuesImageChanges(target.id, values(base), values(head));
    return result;
  }

  const baseObjects = base.state === 'ok' ? base.objects : [];
  const headObjects = head.state === 'ok' ? head.objects : [];
  for (const note of [...(base.state === 'ok' ? base.notes : []), ...(head.state === 'ok' ? head.notes : [])])
    if (!result.notes.includes(clean(note))) result.notes.push(clean(note));
  // Random objects and fields, said once: head's, and base's that head no longer has.
  const random = mergeRandom(base.state === 'ok' ? base.random : [], head.state === 'ok' ? head.random : []);
  if (random.length > 0) {
    result.random = random;
    for (const entry of random) {
      const note = clean(describeRandom(entry));
      if (!result.notes.includes(note)) result.notes.push(note);
    }
  }
  const pairing = pairObjects(baseObjects, headObjects, (object) => object.normalized.text, {
    neverRename: (object) => deletionLoss(object) !== undefined,
  });
  const counts = result.counts;
  const alerts: Alert[] = [];
  const images: ImageChange[] = [];
  const objects: ObjectChange[] = [];
  const context = options.context ?? 3;

  for (const { base: before, head: after, reason } of pairing.pairs) {
    const lines = diffLines(before.normalized.lines, after.normalized.lines, { context });
    // Secret keys, and credentials masked outside Secrets: their sizes show a change the masked lines hide.
    const secretKeys =
      before.normalized.secretKeys || after.normalized.secretKeys
        ? compareSecretKeys(before.normalized.secretKeys, after.normalized.secretKeys)
        : [];
    if (!reason && lines.hunks.length === 0 && !lines.tooLarge && secretKeys.length === 0) {
      counts.unchanged++;
      continue;
    }
    // One stored object served under two groups (extensions → networking.k8s.io) is a change, not a rename.
    const renamed = reason !== undefined && reason !== 'api-group';
    const change: ObjectChange = {
      ...refOf(after),
      change: renamed ? 'renamed' : 'changed',
      apiVersion: after.apiVersion,
      ...lines,
    };
    if (reason || before.apiVersion !== after.apiVersion)
      change.from = {
        apiVersion: before.apiVersion,
        group: before.group,
        namespace: before.namespace,
        name: before.name,
      };
    if (renamed) change.renameReason = reason;
    if (secretKeys.length > 0) change.secretKeys = secretKeys;
    if (rollsOut(before, after)) change.rollout = true;
    // A kustomize hash-suffix rename is benign (a generated object's new name); every other rename
    // deletes the old object and creates a new one: counted apart.
    counts[!renamed ? 'changed' : reason === 'hash-suffix' ? 'renamed' : 'recreated']++;
    objects.push(change);
    alerts.push(...changeAlerts(target.id, before, after, reason));
    images.push(...imageChanges(target.id, before, after));
  }
  for (const object of pairing.added) {
    const change: ObjectChange = {
      ...refOf(object),
      change: 'added',
      apiVersion: object.apiVersion,
      ...diffLines([], object.normalized.lines, { context }),
    };
    if (object.normalized.secretKeys) change.secretKeys = compareSecretKeys(undefined, object.normalized.secretKeys);
    counts.added++;
    objects.push(change);
  }
  for (const object of pairing.removed) {
    const change: ObjectChange = {
      ...refOf(object),
      change: 'removed',
      apiVersion: object.apiVersion,
      ...diffLines(object.normalized.lines, [], { context }),
    };
    if (object.normalized.secretKeys) change.secretKeys = compareSecretKeys(object.normalized.secretKeys, undefined);
    counts.removed++;
    objects.push(change);
    // Removing a whole target deletes what it deployed, which deserves the same alert.
    alerts.push(...removalAlerts(target.id, object));
  }
  objects.sort(compareChanges);
  const alertKey = (alert: Alert): string =>
    `${alert.object ? identityKey(alert.object) : ''}\u0000${alert.kind}\u0000${alert.field ?? ''}`;
  alerts.sort((a, b) => (alertKey(a) < alertKey(b) ? -1 : alertKey(a) > alertKey(b) ? 1 : 0));
  result.objects = objects;
  result.alerts = alerts;
  result.images = images;
  result.status = objects.length > 0 ? 'changed' : 'unchanged';
  return result;
}

/** A plain target's files, rendered natively where the diff runs. */
export interface PlainSide {
  status: 'plain';
  node: TargetNode;
  /** Text of each readable input file; symbolic links are left out and named in `symlinks`. */
  files: Record<string, string>;
  symlinks: string[];
}

/** One side of a target as the diff thread receives it. */
export interface DiffSide {
  /** The side's render; a plain target's files instead, rendered by `diffSides`. */
  outcome: RenderOutcome | PlainSide;
  /** Every file the side reads (YAML, kustomizations, generator env and key files): values that look like secrets are scrubbed from every message. */
  sources: Array<{ path: string; text: string }>;
}

function plainOutcome(side: PlainSide): RenderOutcome {
  const outcome = renderPlain(side.node, (path) => side.files[path]);
  if (side.symlinks.length > 0 && outcome.status === 'ok')
    outcome.notes = [`symbolic links are not followed: ${side.symlinks.join(', ')}`];
  return outcome;
}

/**
 * Everything after the tools ran, for one target: render plain manifests, collect the secret
 * values to scrub (from the sources and from rendered Secrets), and diff. Pure and CPU-bound on
 * text as large as a render's output, so the product runs it in a diff thread.
 */
export function diffSides(
  target: Target,
  base: DiffSide,
  head: DiffSide,
  options: Omit<DiffTargetOptions, 'secrets'> = {},
): TargetDiff {
  const outcomes = [base, head].map((side) =>
    side.outcome.status === 'plain' ? plainOutcome(side.outcome) : side.outcome,
  ) as [RenderOutcome, RenderOutcome];
  const secrets = new Set<string>();
  for (const [index, side] of [base, head].entries()) {
    const texts = new Map(side.sources.map((source) => [source.path, source.text]));
    secretStringsFromSources([...texts.keys()], (path) => texts.get(path), secrets);
    const outcome = outcomes[index] as RenderOutcome;
    // Both renders of a chart rendered twice: a random Secret value differs between them.
    const renders =
      outcome.status === 'ok' ? [outcome.yaml, ...(outcome.again !== undefined ? [outcome.again] : [])] : [];
    for (const yaml of renders) {
      if (!/kind:\s*["']?Secret/.test(yaml)) continue;
      const parsed = parseManifests(yaml);
      if (parsed.ok)
        secretStringsFromObjects(
          parsed.objects.map((object) => object.body),
          secrets,
        );
    }
  }
  return diffTarget(target, outcomes[0], outcomes[1], { ...options, secrets });
}
