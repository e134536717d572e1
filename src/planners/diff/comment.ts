import { cell, code } from '../markdown.js';
import { isSecret } from './normalize.js';
import { renderSharedChange, type SharedChange } from './shared-change.js';
import type { Alert, DiffReport, ImageChange, ObjectChange, ObjectRef, SecretKeyChange, TargetDiff } from './types.js';

/** The hidden marker that finds our sticky comment again. */
export const DIFF_COMMENT_MARKER = '<!-- escalator:diff v1 -->';

/** GitHub refuses comment and check-run bodies of 65,536 characters or more. */
export const GITHUB_BODY_LIMIT = 65_536;

export interface CommentContext {
  baseSha: string;
  headSha: string;
  /**
   * `true`: head is the pull request's merge commit; `false`: GitHub had none, head is the branch
   * head (the comment says so); absent: a plain comparison of two revisions (the CLI).
   */
  mergeCommit?: boolean;
  /**
   * App: the pull request's number and its own head commit. GitHub's merge commit is in no clone,
   * so the footer's command fetches the pull request and names base and this head (`--merged`
   * when the comment rendered the merge commit).
   */
  pull?: { number: number; headSha: string };
  /** CLI `--merged`: `headSha` is this head commit merged into base locally, as GitHub's merge commit is. */
  mergedFrom?: string;
  /** `owner/name`. */
  repository: string;
  /** Budget for the whole body. @default 65,000 */
  maxChars?: number;
  /**
   * The environments the change reaches at once through a shared file (planSharedChange): said
   * first, above the header, in every form of the comment.
   */
  sharedChange?: SharedChange;
}

/**
 * How much of a target's section is shown: every diff, the first hunk of each object, the list of
 * objects, or one line. Sections step down one level at a time, largest first, until the comment
 * fits its budget.
 */
export type SectionLevel = 'full' | 'hunks' | 'objects' | 'line';

const LEVELS: SectionLevel[] = ['full', 'hunks', 'objects', 'line'];
const MAX_TABLE_TARGETS = 150;
const MAX_ALERTS = 30;
const MAX_IMAGE_ROWS = 50;
const MAX_LISTED_OBJECTS = 150;
const FIRST_HUNK_LINES = 30;
const MAX_ID = 200;

function short(sha: string): string {
  return /^[0-9a-f]{40,64}$/i.test(sha) ? sha.slice(0, 7) : sha;
}

function clip(text: string, max = MAX_ID): string {
  return text.length <= max ? text : `${text.slice(0, max)}…`;
}

function plural(count: number, one: string, many = `${one}s`): string {
  return `${count} ${count === 1 ? one : many}`;
}

/**
 * Prose in Markdown from text that may hold repository text (reasons, notes, alerts): every
 * character Markdown or HTML would read is backslash-escaped (CommonMark lets any ASCII
 * punctuation be), never turned into an HTML entity, so a reason reads as the sentence it is —
 * `>=1.0.0`, not `&gt;=1.0.0` — wherever the Markdown is shown as text.
 */
function prose(text: string): string {
  return text.replace(/[\\`*_{}[\]()#+\-.!|<>@~&]/g, (ch) => `\\${ch}`).replace(/\r\n?|\n/g, ' ');
}

/** Plain text for inside raw HTML (`<summary>`), where Markdown is not parsed: entities. */
function htmlText(text: string): string {
  return text.replace(/[&<>"'`@\\|*_[\]#~!]/g, (ch) => `&#${ch.charCodeAt(0)};`).replace(/\r?\n/g, ' ');
}

/** Text for inside raw HTML (`<summary>`), where markdown is not parsed: entities only. */
function htmlCode(text: string): string {
  const escaped = clip(text)
    .replace(/[&<>"'`@\\|*_[\]#~!]/g, (ch) => `&#${ch.charCodeAt(0)};`)
    .replace(/\r?\n/g, ' ');
  return `<code>${escaped}</code>`;
}

/** A fence longer than any backtick run in the content, so no line of it can close the block. */
function fenced(info: string, content: string): string {
  const longest = Math.max(0, ...(content.match(/`+/g) ?? []).map((run) => run.length));
  const fence = '`'.repeat(Math.max(3, longest + 1));
  return `${fence}${info}\n${content.endsWith('\n') ? content : `${content}\n`}${fence}`;
}

function objectName(ref: ObjectRef): string {
  return ref.namespace ? `${ref.namespace}/${ref.name}` : ref.name;
}

function objectLabel(ref: ObjectRef): string {
  return `${prose(ref.kind)} ${code(clip(objectName(ref)))}`;
}

function secretKeyText(change: SecretKeyChange): string {
  if (change.change === 'changed') return `${code(change.key)} changed (${change.fromBytes} → ${change.toBytes} bytes)`;
  if (change.change === 'added') return `${code(change.key)} added (${change.toBytes} bytes)`;
  return `${code(change.key)} removed`;
}

const REASONS: Record<string, string> = {
  'hash-suffix': 'kustomize hash suffix',
  namespace: 'namespace move',
  'api-group': 'API group change',
  similarity: 'similar content',
};

function changeWords(object: ObjectChange): string {
  const words: string[] = [object.change];
  if (object.change === 'renamed' && object.from)
    words[0] = `renamed from ${code(clip(objectName({ ...object, namespace: object.from.namespace, name: object.from.name })))} (${REASONS[object.renameReason ?? ''] ?? 'rename'})`;
  if (object.from && object.from.apiVersion !== object.apiVersion)
    words.push(`apiVersion ${code(object.from.apiVersion)} → ${code(object.apiVersion)}`);
  if (object.rollout) words.push('rolls out');
  return words.join(' · ');
}

const COUNT_KEYS = ['added', 'changed', 'removed', 'renamed', 'recreated'] as const;

function countsText(counts: Record<(typeof COUNT_KEYS)[number], number>): string {
  const parts = COUNT_KEYS.filter((key) => counts[key] > 0).map((key) => `${counts[key]} ${key}`);
  return parts.length > 0 ? parts.join(', ') : 'no change';
}

function failureWords(target: TargetDiff): string {
  const failure = target.failure;
  if (!failure) return '';
  if (failure.side === 'head')
    return failure.breaks ? 'fails to render at head: this PR breaks it' : 'new target fails to render';
  if (failure.side === 'both') return 'fails to render at base and head';
  if (failure.side === 'diff') return 'rendered, but the diff was stopped';
  return target.status === 'failed' ? 'fails to render at base (renders at head)' : 'fixed: did not render at base';
}

// ---------------------------------------------------------------- fixed parts

function headerText(report: DiffReport, context: CommentContext): string {
  const sha = code(short(context.headSha));
  if (context.mergedFrom !== undefined)
    return `### Rendered manifest diff\n\nBase ${code(short(context.baseSha))} → head ${code(short(context.mergedFrom))} merged into base (${sha}, as GitHub's merge commit of a pull request).`;
  const head =
    context.mergeCommit === true
      ? `the merge commit ${sha} of this pull request`
      : context.mergeCommit === false
        ? `head ${sha} (GitHub has no merge commit for this pull request, so newer changes on the base branch are not included)`
        : `head ${sha}`;
  return `### Rendered manifest diff\n\nBase ${code(short(context.baseSha))} → ${head}.`;
}

/** What fails the check, in words: targets that fail to render at head, and targets whose diff was stopped. */
function failingWords(report: DiffReport): string[] {
  const stopped = report.targets.filter((target) => target.failure?.side === 'diff').length;
  const fresh = report.targets.filter(
    (target) => target.failure?.side === 'head' && !target.failure.breaks && target.status === 'failed',
  ).length;
  const breaking = report.summary.failures - stopped - fresh;
  const words: string[] = [];
  if (breaking > 0) words.push(`${plural(breaking, 'target')} ${breaking === 1 ? 'fails' : 'fail'} to render at head`);
  if (fresh > 0) words.push(`${plural(fresh, 'new target')} ${fresh === 1 ? 'fails' : 'fail'} to render`);
  if (stopped > 0) words.push(`${plural(stopped, 'target')} not diffed`);
  return words;
}

const SUMMARY_WORDS: Record<(typeof COUNT_KEYS)[number], string> = {
  added: 'added',
  changed: 'changed',
  removed: 'removed',
  renamed: 'renamed by kustomize hash suffix',
  recreated: 'deleted and recreated under a new name',
};

function checkedWords(report: DiffReport): string {
  const s = report.summary;
  const notRendered = s.targetsNotRendered > 0 ? `, **${s.targetsNotRendered} not rendered**` : '';
  return `**${plural(s.targetsChecked, 'target')} checked**: ${s.targetsChanged} changed, ${s.targetsUnchanged} unchanged${notRendered}`;
}

function summaryLine(report: DiffReport): string {
  const s = report.summary;
  const parts = [checkedWords(report)];
  for (const key of COUNT_KEYS) if (s[key] > 0) parts.push(`${plural(s[key], 'object')} ${SUMMARY_WORDS[key]}`);
  if (s.secretsChanged > 0) parts.push(plural(s.secretsChanged, 'Secret') + ' changed');
  const failing = failingWords(report);
  if (failing.length > 0) parts.push(...failing.map((words) => `**${words}**`));
  else if (s.targetsFailed > 0) parts.push(`${plural(s.targetsFailed, 'target')} failed to render at base`);
  const fixed = report.targets.filter((target) => target.failure?.side === 'base' && target.status !== 'failed');
  if (fixed.length > 0) parts.push(`${plural(fixed.length, 'target')} fixed (did not render at base)`);
  return parts.join(' · ');
}

const MAX_NOT_RENDERED_NAMES = 10;

/**
 * The targets Escalator could not look at, one line per reason with the targets it names
 * (helm missing for 32 charts is one line): at the top of every form of the comment and the check.
 */
function notRenderedBlock(report: DiffReport): string | undefined {
  const byReason = new Map<string, string[]>();
  for (const target of report.targets) {
    if (target.status !== 'not-rendered') continue;
    const reason = target.notRendered ?? 'not rendered';
    byReason.set(reason, [...(byReason.get(reason) ?? []), target.id]);
  }
  if (byReason.size === 0) return undefined;
  const count = report.summary.targetsNotRendered;
  const lines = [
    '> [!IMPORTANT]',
    `> **${plural(count, 'target')} not rendered**: what ${count === 1 ? 'it changes' : 'they change'} in the cluster is unknown.`,
  ];
  for (const [reason, ids] of byReason) {
    const names = ids.slice(0, MAX_NOT_RENDERED_NAMES).map((id) => code(clip(id)));
    const more = ids.length > MAX_NOT_RENDERED_NAMES ? ` and ${ids.length - MAX_NOT_RENDERED_NAMES} more` : '';
    lines.push(`> - ${prose(reason)}: ${names.join(', ')}${more}`);
  }
  return lines.join('\n');
}

const MAX_ALERT_TARGETS = 3;

function alertLine(alert: Alert, alsoIn: string[] = []): string {
  const more =
    alsoIn.length > 0
      ? `, ${alsoIn
          .slice(0, MAX_ALERT_TARGETS - 1)
          .map((id) => code(clip(id)))
          .join(', ')}`
      : '';
  const rest =
    alsoIn.length > MAX_ALERT_TARGETS - 1 ? ` and ${alsoIn.length - (MAX_ALERT_TARGETS - 1)} more targets` : '';
  const where = `${code(clip(alert.target))}${more}${rest}`;
  if (!alert.object) return `${where}: ${prose(alert.detail)}`;
  const field = alert.field ? ` ${code(alert.field)}` : '';
  return `${where}: ${objectLabel(alert.object)}${field} ${prose(alert.detail)}`;
}

function alertsBlock(alerts: Alert[]): string {
  const blocks: string[] = [];
  for (const level of ['caution', 'warning'] as const) {
    // The same alert in several targets (a shared base) is one line naming them.
    const groups = new Map<string, { alert: Alert; alsoIn: string[] }>();
    for (const alert of alerts.filter((item) => item.level === level)) {
      const { target: _target, object, ...rest } = alert;
      const key = JSON.stringify([rest, object ? { ...object, namespace: '' } : undefined]);
      const group = groups.get(key);
      if (!group) groups.set(key, { alert, alsoIn: [] });
      else {
        group.alsoIn.push(alert.target);
        if (group.alert.object && object && group.alert.object.namespace !== object.namespace)
          group.alert = { ...group.alert, object: { ...group.alert.object, namespace: '' } };
      }
    }
    const items = [...groups.values()];
    if (items.length === 0) continue;
    const shown = items.slice(0, MAX_ALERTS).map(({ alert, alsoIn }) => `> - ${alertLine(alert, alsoIn)}`);
    if (items.length > MAX_ALERTS) shown.push(`> - …and ${items.length - MAX_ALERTS} more`);
    blocks.push([`> [!${level.toUpperCase()}]`, ...shown].join('\n'));
  }
  return blocks.join('\n\n');
}

function resultCell(target: TargetDiff): string {
  if (target.status === 'not-rendered') return '**not rendered**';
  if (target.status === 'failed') {
    const side = target.failure?.side;
    return side === 'base'
      ? 'fails at base'
      : side === 'diff'
        ? '**not diffed**'
        : side === 'both'
          ? '**fails at base and head**'
          : target.failure?.breaks
            ? '**breaks at head**'
            : '**new target fails**';
  }
  if (target.failure?.side === 'base') return 'fixed (did not render at base)';
  return target.presence === 'added' ? 'new target' : target.presence === 'removed' ? 'target removed' : target.status;
}

function targetsTable(report: DiffReport): string {
  const rows = report.targets.slice(0, MAX_TABLE_TARGETS).map((target) => {
    const counted = target.status === 'changed' || target.status === 'unchanged';
    const counts = COUNT_KEYS.map((key) => (counted ? String(target.counts[key]) : '')).join(' | ');
    return `| ${cell(code(clip(target.id)))} | ${target.kind} | ${resultCell(target)} | ${counts} |`;
  });
  if (report.targets.length > MAX_TABLE_TARGETS)
    rows.push(`| …and ${report.targets.length - MAX_TABLE_TARGETS} more targets | | | | | | | |`);
  return [
    '| Target | Kind | Result | Added | Changed | Removed | Renamed | Recreated |',
    '| --- | --- | --- | ---: | ---: | ---: | ---: | ---: |',
    ...rows,
  ].join('\n');
}

/** `ghcr.io/a/b:1.2@sha256:…` → name and version. */
export function splitImage(ref: string): { name: string; version: string } {
  const at = ref.indexOf('@');
  const beforeDigest = at < 0 ? ref : ref.slice(0, at);
  const digest = at < 0 ? '' : ref.slice(at);
  const colon = beforeDigest.lastIndexOf(':');
  const hasTag = colon > beforeDigest.lastIndexOf('/');
  const name = hasTag ? beforeDigest.slice(0, colon) : beforeDigest;
  const tag = hasTag ? beforeDigest.slice(colon + 1) : '';
  return { name, version: `${tag}${digest}` || 'latest' };
}

/** Digests are cut to 16 hex digits in the table (the diff below has them whole). */
function shortDigest(version: string): string {
  return version.replace(/(sha256:[0-9a-f]{16})[0-9a-f]{48}/g, '$1…');
}

const MAX_IMAGE_TARGETS = 5;

/**
 * One row per image, grouped by where it runs (targets are environments): "`prod-us`,
 * `staging-us`: `2.0` → `3.5`; `qa`: `1.0` → `4.0`". Images bumped through Helm values of a chart
 * that was not rendered are in it too.
 */
function imagesTable(images: ImageChange[]): string {
  const rows = new Map<string, Map<string, { from: string; to: string; targets: string[] }>>();
  for (const change of images) {
    const from = change.from ? splitImage(change.from) : undefined;
    const to = change.to ? splitImage(change.to) : undefined;
    const sameName = from && to && from.name === to.name;
    const image = sameName ? from.name : ((to ?? from)?.name ?? '');
    const fromText =
      change.from === undefined ? '—' : code(shortDigest(clip(sameName ? (from?.version ?? '') : change.from)));
    const toText = change.to === undefined ? '—' : code(shortDigest(clip(sameName ? (to?.version ?? '') : change.to)));
    const transitions = rows.get(image) ?? new Map<string, { from: string; to: string; targets: string[] }>();
    const key = `${fromText}\u0000${toText}`;
    const transition = transitions.get(key) ?? { from: fromText, to: toText, targets: [] };
    if (!transition.targets.includes(change.target)) transition.targets.push(change.target);
    transitions.set(key, transition);
    rows.set(image, transitions);
  }
  const lines = [...rows.entries()].slice(0, MAX_IMAGE_ROWS).map(([image, transitions]) => {
    const where = [...transitions.values()].map(({ from, to, targets }) => {
      const named = targets.slice(0, MAX_IMAGE_TARGETS).map((target) => code(clip(target)));
      const more = targets.length > MAX_IMAGE_TARGETS ? ` and ${targets.length - MAX_IMAGE_TARGETS} more` : '';
      return `${named.join(', ')}${more}: ${from} → ${to}`;
    });
    return `| ${cell(code(clip(image)))} | ${cell(where.join('<br>'))} |`;
  });
  if (rows.size > MAX_IMAGE_ROWS) lines.push(`| …and ${rows.size - MAX_IMAGE_ROWS} more | |`);
  return ['#### Image changes', '', '| Image | Where: from → to |', '| --- | --- |', ...lines].join('\n');
}

function notesBlock(report: DiffReport): string {
  return report.notes.map((note) => `- ${prose(clip(note, 500))}`).join('\n');
}

/** A command that reproduces the comment from a clone: commits a clone has (never GitHub's merge commit). */
function reproduceCommand(context: CommentContext): string {
  const base = short(context.baseSha);
  if (context.mergedFrom !== undefined)
    return `escalator diff --base ${base} --head ${short(context.mergedFrom)} --merged`;
  if (context.pull) {
    // GitHub keeps every pull request's head at refs/pull/<number>/head (docs.github.com,
    // "Checking out pull requests locally"); `git fetch origin` brings the base commit.
    const merged = context.mergeCommit === true ? ' --merged' : '';
    return `git fetch origin && git fetch origin pull/${context.pull.number}/head && escalator diff --base ${base} --head ${short(context.pull.headSha)}${merged}`;
  }
  return `escalator diff --base ${base} --head ${short(context.headSha)}`;
}

function footer(report: DiffReport, context: CommentContext): string {
  const s = report.summary;
  const notRendered = s.targetsNotRendered > 0 ? `, ${s.targetsNotRendered} not rendered` : '';
  return `<sub>Escalator checked ${plural(s.targetsChecked, 'target')} of ${prose(clip(context.repository))} (${s.targetsUnchanged} unchanged${notRendered}) without a cluster. Secret values are never shown. Reproduce locally: ${code(reproduceCommand(context))}</sub>`;
}

// ---------------------------------------------------------------- target sections

/**
 * One object's block. At `hunks`: without `hunkLines`, the first 30 lines of its first hunk; with
 * it, whole hunks while they fit that many lines, then the start of the next one.
 */
function objectBlock(object: ObjectChange, level: 'full' | 'hunks', hunkLines?: number): string {
  const lines = [`**${objectLabel(object)}** · ${changeWords(object)}`];
  if (object.secretKeys && object.secretKeys.length > 0)
    lines.push(
      '',
      `${isSecret(object) ? 'Secret keys' : 'Masked as credentials (URL passwords, values named like secrets)'}: ${object.secretKeys.map(secretKeyText).join(', ')}`,
    );
  if (object.tooLarge) {
    const { removed, added } = object.tooLarge;
    // Counted without order: the same lines in another order count as none.
    const what =
      removed + added === 0 ? 'lines moved' : `${plural(removed, 'line')} removed and ${plural(added, 'line')} added`;
    lines.push('', `_${what}: too large to show line by line. Run ${code('escalator diff')} locally to see it._`);
  } else if (object.hunks.length > 0) {
    if (level === 'full') lines.push('', fenced('diff', object.hunks.join('\n')));
    else {
      const shown: string[] = [];
      let hunksShown = 0;
      if (hunkLines === undefined) {
        shown.push(...(object.hunks[0] ?? '').split('\n').slice(0, FIRST_HUNK_LINES));
        hunksShown = 1;
      } else
        for (const hunk of object.hunks) {
          const hunkText = hunk.split('\n');
          const room = hunkLines - shown.length;
          if (room <= 0) break;
          shown.push(...hunkText.slice(0, room));
          hunksShown++;
          if (hunkText.length > room) break;
        }
      const total = object.hunks.reduce((sum, hunk) => sum + hunk.split('\n').length, 0);
      const hiddenLines = total - shown.length;
      lines.push('', fenced('diff', shown.join('\n')));
      const moreHunks = object.hunks.length - hunksShown;
      if (hiddenLines > 0)
        lines.push(
          '',
          moreHunks > 0
            ? `_…${plural(moreHunks, 'more hunk')}, ${plural(hiddenLines, 'line')} not shown to fit the comment size._`
            : `_…${plural(hiddenLines, 'more line')} of this hunk not shown to fit the comment size._`,
        );
    }
  }
  return lines.join('\n');
}

/** What a section's summary and one-line form say about the target. */
function targetWords(target: TargetDiff): string {
  if (target.status === 'not-rendered') {
    const values = target.values?.length ?? 0;
    return `not rendered (${target.notRendered ?? 'unknown reason'})${values > 0 ? `; ${plural(values, 'values file')} changed` : ''}`;
  }
  if (target.status === 'failed') return failureWords(target);
  return target.failure ? `${countsText(target.counts)} (${failureWords(target)})` : countsText(target.counts);
}

/** A section's target; `alsoIn`: the other targets with exactly the same change (a shared base), shown once. */
interface SectionTarget extends TargetDiff {
  alsoIn?: string[];
}

const MAX_SAME_LISTED = 30;

function sectionSummary(target: SectionTarget): string {
  const what = targetWords(target);
  const presence =
    target.presence === 'added' ? ' (new target)' : target.presence === 'removed' ? ' (target removed)' : '';
  const more = target.alsoIn ? ` and ${plural(target.alsoIn.length, 'more target')}, the same change` : '';
  return `${htmlCode(target.id)}${presence}${more}: ${htmlText(what)}`;
}

function sameChangeLine(target: SectionTarget): string | undefined {
  if (!target.alsoIn) return undefined;
  const ids = [target.id, ...target.alsoIn];
  const listed = ids.slice(0, MAX_SAME_LISTED).map((id) => code(clip(id)));
  const more = ids.length > MAX_SAME_LISTED ? ` and ${ids.length - MAX_SAME_LISTED} more` : '';
  return `_The same change in ${ids.length} targets: ${listed.join(', ')}${more}._`;
}

function renderSection(target: SectionTarget, level: SectionLevel, hunkLines?: number): string {
  if (level === 'line') {
    const what = prose(targetWords(target));
    const more = target.alsoIn ? ` and ${plural(target.alsoIn.length, 'more target')} (the same change)` : '';
    return `- ${code(clip(target.id))}${more}: ${what}. _Details omitted to fit the comment size; run ${code('escalator diff')} or see the JSON report._`;
  }
  const body: string[] = [];
  const same = sameChangeLine(target);
  if (same) body.push(same);
  for (const note of target.notes) body.push(`_${prose(clip(note, 500))}_`);
  if (target.failure) body.push(fenced('text', clip(target.failure.message, level === 'full' ? 2000 : 500)));
  const objects = target.objects.length > 0 ? target.objects : (target.values ?? []);
  if (level === 'objects') {
    const listed = objects
      .slice(0, MAX_LISTED_OBJECTS)
      .map((object) => `- ${objectLabel(object)} · ${changeWords(object)}`);
    if (objects.length > MAX_LISTED_OBJECTS) listed.push(`- …and ${objects.length - MAX_LISTED_OBJECTS} more`);
    if (listed.length > 0) body.push(`_Diffs omitted to fit the comment size; objects only._\n\n${listed.join('\n')}`);
  } else for (const object of objects) body.push(objectBlock(object, level, hunkLines));
  return [
    '<details>',
    `<summary>${sectionSummary(target)}</summary>`,
    '',
    ...body.flatMap((block) => [block, '']),
    '</details>',
  ].join('\n');
}

/** Which level each section of the comment is shown at, and how many sections had to be left out. */
export interface CommentLayout {
  levels: Map<string, SectionLevel>;
  omitted: number;
  /** Each step down in order, as `[target, level]`: every section starts `full`. */
  steps: Array<[string, SectionLevel]>;
  /** Sections at `hunks` given more than the first hunk where the budget has room: whole hunks up to this many lines per object. */
  hunkLines: Map<string, number>;
}

/** Targets with something to show below the tables: changes, failures, values files of a chart not rendered. */
function hasSection(target: TargetDiff): boolean {
  if (target.status === 'not-rendered') return (target.values?.length ?? 0) > 0;
  return target.status !== 'unchanged';
}

/** What a section shows, without where it is: equal keys are the same change (namespaces aside). */
function sectionKey(target: TargetDiff): string {
  const objects = [...target.objects, ...(target.values ?? [])].map(({ namespace: _namespace, from, ...rest }) => ({
    ...rest,
    from: from ? { ...from, namespace: '' } : undefined,
  }));
  return JSON.stringify([
    target.kind,
    target.status,
    target.presence,
    target.notRendered,
    target.failure,
    target.notes,
    objects,
  ]);
}

/**
 * Targets with a section, a change repeated identically in several targets (a shared base in
 * eleven environments) once: the first target stands for all, with the others in `alsoIn`. An
 * object's namespace is kept only when it is the same in every one of them.
 */
function sectionTargets(report: DiffReport): SectionTarget[] {
  const groups = new Map<string, TargetDiff[]>();
  for (const target of report.targets.filter(hasSection)) {
    const key = sectionKey(target);
    groups.set(key, [...(groups.get(key) ?? []), target]);
  }
  return [...groups.values()].map((members) => {
    const [first, ...rest] = members as [TargetDiff, ...TargetDiff[]];
    if (rest.length === 0) return first;
    const sameNamespace = (index: number): boolean =>
      rest.every((member) => member.objects[index]?.namespace === first.objects[index]?.namespace);
    return {
      ...first,
      objects: first.objects.map((object, index) => (sameNamespace(index) ? object : { ...object, namespace: '' })),
      alsoIn: rest.map((member) => member.id),
    };
  });
}

/** The shared-change callout, when the change reaches several environments at once. */
function sharedCallout(context: CommentContext): string[] {
  return context.sharedChange ? [renderSharedChange(context.sharedChange)] : [];
}

function fixedParts(report: DiffReport, context: CommentContext): { head: string; tail: string } {
  const parts = [DIFF_COMMENT_MARKER, ...sharedCallout(context), headerText(report, context), summaryLine(report)];
  const notRendered = notRenderedBlock(report);
  if (notRendered) parts.push(notRendered);
  if (report.alerts.length > 0) parts.push(alertsBlock(report.alerts));
  if (report.targets.length > 0) parts.push(targetsTable(report));
  if (report.images.length > 0) parts.push(imagesTable(report.images));
  if (report.notes.length > 0) parts.push(notesBlock(report));
  return { head: parts.join('\n\n'), tail: footer(report, context) };
}

function joinBody(head: string, sections: string[], tail: string): string {
  return [head, ...sections, tail].join('\n\n') + '\n';
}

/** Plan the step-down: every section starts full; the largest steps down one level until the body fits. */
export function planCommentLayout(report: DiffReport, context: CommentContext): CommentLayout {
  const budget = Math.min(context.maxChars ?? 65_000, GITHUB_BODY_LIMIT - 1);
  const { head, tail } = fixedParts(report, context);
  const targets = sectionTargets(report);
  const levels = new Map<string, SectionLevel>(targets.map((target) => [target.id, 'full']));
  const sizes = new Map<string, number>(targets.map((target) => [target.id, renderSection(target, 'full').length + 2]));
  const steps: Array<[string, SectionLevel]> = [];
  let total = head.length + tail.length + 3 + [...sizes.values()].reduce((sum, size) => sum + size, 0);
  while (total > budget) {
    let pick: TargetDiff | undefined;
    for (const target of targets) {
      if (levels.get(target.id) === 'line') continue;
      if (!pick || (sizes.get(target.id) ?? 0) > (sizes.get(pick.id) ?? 0)) pick = target;
    }
    if (!pick) break;
    const next = LEVELS[LEVELS.indexOf(levels.get(pick.id) ?? 'full') + 1] ?? 'line';
    levels.set(pick.id, next);
    steps.push([pick.id, next]);
    const size = renderSection(pick, next).length + 2;
    total += size - (sizes.get(pick.id) ?? 0);
    sizes.set(pick.id, size);
  }
  // Gradual: sections cut to their first hunk get whole hunks back, 30, 60, 120… lines per object,
  // while the budget has room (smallest sections first), instead of leaving the room unused.
  const hunkLines = new Map<string, number>();
  const cut = targets
    .filter((target) => levels.get(target.id) === 'hunks')
    .sort((a, b) => (sizes.get(a.id) ?? 0) - (sizes.get(b.id) ?? 0));
  for (const target of cut) {
    const longest = Math.max(
      0,
      ...target.objects.map((object) => object.hunks.reduce((sum, hunk) => sum + hunk.split('\n').length, 0)),
    );
    let lines: number | undefined;
    for (let more = FIRST_HUNK_LINES; ; more *= 2) {
      const size = renderSection(target, 'hunks', Math.min(more, longest)).length + 2;
      if (total + size - (sizes.get(target.id) ?? 0) > budget) break;
      total += size - (sizes.get(target.id) ?? 0);
      sizes.set(target.id, size);
      lines = Math.min(more, longest);
      if (more >= longest) break;
    }
    if (lines !== undefined) hunkLines.set(target.id, lines);
  }
  let omitted = 0;
  // Thousands of targets: even one line each is too much. Leave out the last ones, say how many.
  while (total > budget && levels.size > 0) {
    const last = [...levels.keys()].at(-1) as string;
    total -= sizes.get(last) ?? 0;
    levels.delete(last);
    omitted++;
    if (omitted === 1) total += 200;
  }
  return { levels, omitted, steps, hunkLines };
}

/** The helms that rendered some target ("Rendered with helm v3.17.3."), each once. */
function helmVersions(report: DiffReport): string[] {
  const lines = new Set<string>();
  for (const target of report.targets)
    for (const note of target.notes) if (note.startsWith('Rendered with helm ')) lines.add(note);
  return [...lines].sort();
}

function noChangesComment(report: DiffReport, context: CommentContext): string {
  const s = report.summary;
  const notRendered = notRenderedBlock(report);
  const checked =
    s.targetsChecked > 0
      ? ` ${plural(s.targetsChecked, 'target')} checked, all unchanged.`
      : ' No target reads the changed files.';
  const sha = code(short(context.headSha));
  const rendered = s.targetsChecked - s.targetsNotRendered;
  const first =
    s.targetsNotRendered === 0
      ? `No rendered changes as of ${sha}.${checked}`
      : rendered === 0
        ? `Nothing was rendered as of ${sha}: **${plural(s.targetsNotRendered, 'target')} not rendered**, so this comment cannot say what the change does.`
        : `No rendered changes as of ${sha} in the ${plural(rendered, 'target')} rendered, but **${s.targetsNotRendered} not rendered**.`;
  // The verdict depends on the helm that rendered (helm 3 and 4 render some charts differently): named here too.
  const helms = helmVersions(report);
  const parts = [
    DIFF_COMMENT_MARKER,
    ...sharedCallout(context),
    '### Rendered manifest diff',
    helms.length > 0 ? `${first} ${prose(helms.join(' '))}` : first,
  ];
  if (notRendered) parts.push(notRendered);
  if (report.images.length > 0) parts.push(imagesTable(report.images));
  if (report.notes.length > 0) parts.push(notesBlock(report));
  parts.push(footer(report, context));
  return parts.join('\n\n') + '\n';
}

/**
 * The sticky pull request comment: marker, shared-change callout, header, summary line, alerts,
 * targets table, image table, notes, one collapsible section per changed or failing target,
 * footer. Always shorter than GitHub's 65,536-character limit; deterministic (same report and
 * context, same bytes).
 */
export function renderComment(report: DiffReport, context: CommentContext): string {
  if (report.targets.every((target) => target.status === 'unchanged' || !hasSection(target)))
    return noChangesComment(report, context);
  const { head, tail } = fixedParts(report, context);
  const layout = planCommentLayout(report, context);
  const sections: string[] = [];
  for (const target of sectionTargets(report)) {
    const level = layout.levels.get(target.id);
    if (level) sections.push(renderSection(target, level, layout.hunkLines.get(target.id)));
  }
  if (layout.omitted > 0)
    sections.push(
      `_…and ${plural(layout.omitted, 'more changed target')} not shown to fit the comment size; run ${code('escalator diff --format json')} for everything._`,
    );
  const body = joinBody(head, sections, tail);
  // The fixed parts are capped (rows, alerts), so this holds; checked rather than assumed.
  return body.length < GITHUB_BODY_LIMIT
    ? body
    : `${body.slice(0, GITHUB_BODY_LIMIT - 200)}\n\n_Comment cut to fit GitHub's size limit._\n`;
}

/**
 * The check run for the same report: failure when a target fails to render at head; neutral when
 * nothing fails but some target was not rendered (Escalator could not look, so it cannot say success).
 */
export function renderCheckSummary(report: DiffReport): {
  conclusion: 'success' | 'failure' | 'neutral';
  title: string;
  summary: string;
} {
  const s = report.summary;
  const conclusion = s.failures > 0 ? 'failure' : s.targetsNotRendered > 0 ? 'neutral' : 'success';
  const titleParts =
    s.targetsChecked === 0
      ? ['No target reads the changed files']
      : [`${s.targetsChanged} of ${plural(s.targetsChecked, 'target')} changed`];
  if (s.targetsNotRendered > 0) titleParts.push(`${s.targetsNotRendered} not rendered`);
  titleParts.push(...failingWords(report));
  const parts = [summaryLine(report)];
  const notRendered = notRenderedBlock(report);
  if (notRendered) parts.push(notRendered);
  if (report.alerts.length > 0) parts.push(alertsBlock(report.alerts));
  if (report.targets.length > 0) parts.push(targetsTable(report));
  if (report.images.length > 0) parts.push(imagesTable(report.images));
  const failing = report.targets.filter((target) => target.failure);
  for (const target of failing.slice(0, 10))
    parts.push(
      `${code(clip(target.id))}: ${failureWords(target)}\n\n${fenced('text', clip(target.failure?.message ?? '', 1500))}`,
    );
  if (failing.length > 10) parts.push(`…and ${plural(failing.length - 10, 'more failing target')}.`);
  let summary = parts.join('\n\n') + '\n';
  if (summary.length >= GITHUB_BODY_LIMIT)
    summary = `${summary.slice(0, GITHUB_BODY_LIMIT - 200)}\n\n_Summary cut to fit GitHub's size limit._\n`;
  return { conclusion, title: titleParts.join(' · '), summary };
}
