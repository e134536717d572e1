/**
 * Carrying waiting configuration changes into the next environment (docs/configuration.md,
 * "Promote configuration"): the changes of (Y, app) in the order they landed in X, each planned
 * three-way by `planConfigPromotion` on top of what the previous ones left, and what a reviewer
 * reads of them. Pure: texts in, texts and words out.
 */
import { planConfigPromotion, type ConfigFilePlan } from './config-promote/index.js';
import { editImages } from './image-edit/index.js';
import { code, escapeText } from './markdown.js';
import { readVersions } from './promotion-plan.js';

/** A pull request as provenance: `#12 Raise the log level (@alice)`. */
export interface SourcePull {
  number: number;
  title: string;
  author: string;
}

/** A configuration change that merged into environment X and waits to go into the next one. */
export interface ConfigChange {
  /** `<X>:<merge commit>`: one per merge and source environment. */
  id: string;
  /** The environment it landed in (X). */
  source: string;
  /** The pull request whose merge brought it into X. */
  pull: SourcePull;
  /** The pull requests that brought it into the environments before X, oldest first (a promotion's chain). */
  origins: SourcePull[];
  /** The merge commit and its first parent: X's files after and before the change. */
  mergeSha: string;
  parentSha: string;
  /** When it merged (ISO): the order changes go in, and where a soak counts from. */
  landedAt: string;
  /** X's folder of the app (`apps/hello/overlays/dev`) and which of X's paths it is. */
  folder: string;
  pathIndex: number;
  /** The changed files, relative to `folder`. */
  files: string[];
  /**
   * The git blob SHAs of the changed files (repository paths) before and after the change, where
   * the index knew them when the change landed: their texts are read from the blob store.
   */
  blobs?: { before: Record<string, string>; after: Record<string, string> };
}

/** One change with X's texts before and after it, per file relative to the folder. */
export interface LoadedChange {
  change: ConfigChange;
  files: Array<{ path: string; before: string | undefined; after: string | undefined }>;
}

export interface CarryInput {
  /** Y's folder of the app: where the relative paths land. */
  targetFolder: string;
  /** Y's texts now, by path relative to the folder (absent: Y has no such file). */
  targetFiles: ReadonlyMap<string, string>;
  changes: readonly LoadedChange[];
}

/** What became of one change. */
export interface CarriedChange {
  change: ConfigChange;
  /** `carried`: something of it is written; `in-place`: Y already holds it; `blocked`: every edit met a value Y keeps, or was refused. */
  outcome: 'carried' | 'in-place' | 'blocked';
  files: ConfigFilePlan[];
}

export interface CarryPlan {
  /** Files to write in Y (repository paths). */
  updates: Array<{ path: string; content: string }>;
  /** Files to delete in Y (repository paths). */
  deletions: string[];
  changes: CarriedChange[];
}

/**
 * X's text before the change with the image versions X's text after it sets: what the change did
 * apart from image versions, which the image promotion carries (a promotion merged into X moved
 * versions too, and the next hop must not carry them as configuration). The text before is kept
 * when the editor cannot set them.
 */
export function withVersionsOf(path: string, before: string, after: string): string {
  let text = before;
  for (const version of readVersions([{ path, text: after }]).values()) {
    const result = editImages(
      text,
      { repository: version.repository, tag: version.tag, ...(version.digest ? { digest: version.digest } : {}) },
      { path, pinDigest: version.digest !== undefined, origin: 'promotion' },
    );
    if (result.refused.length === 0 && result.changed.length > 0) text = result.text;
  }
  return text;
}

/**
 * Plan the waiting changes of (Y, app) in order: each is planned against Y as the changes before
 * it left it; a change Y already holds is `in-place`, one of which nothing can be written is
 * `blocked` (and writes nothing), the rest are `carried`.
 */
export function planConfigCarry(input: CarryInput): CarryPlan {
  const current = new Map<string, string | undefined>(input.targetFiles);
  const changes: CarriedChange[] = [];
  for (const loaded of input.changes) {
    const plan = planConfigPromotion(
      loaded.files.map((file) => ({
        path: file.path,
        sourceBefore:
          file.before !== undefined && file.after !== undefined
            ? withVersionsOf(file.path, file.before, file.after)
            : file.before,
        sourceAfter: file.after,
        target: current.get(file.path),
      })),
    );
    let wrote = false;
    for (const file of plan.files) {
      if ((file.outcome === 'edited' || file.outcome === 'created') && file.text !== undefined) {
        current.set(file.path, file.text);
        wrote = true;
      } else if (file.outcome === 'deleted') {
        current.set(file.path, undefined);
        wrote = true;
      }
    }
    const outcome = wrote
      ? 'carried'
      : plan.files.every((file) => file.outcome === 'unchanged')
        ? 'in-place'
        : 'blocked';
    changes.push({ change: loaded.change, outcome, files: plan.files });
  }
  const updates: CarryPlan['updates'] = [];
  const deletions: string[] = [];
  for (const [path, text] of [...current].sort(([a], [b]) => a.localeCompare(b))) {
    if (text === input.targetFiles.get(path)) continue;
    const full = `${input.targetFolder}/${path}`;
    if (text === undefined) {
      if (input.targetFiles.has(path)) deletions.push(full);
    } else updates.push({ path: full, content: text });
  }
  return { updates, deletions, changes };
}

/** `#12 Raise the log level (@alice)`, escaped. */
export function pullText(pull: SourcePull): string {
  return `#${pull.number} ${escapeText(pull.title)} (@${pull.author.replace(/[^A-Za-z0-9_.[\]-]/g, '')})`;
}

/** The chain of a change: its origins and the pull request that merged it into X. */
function provenance(change: ConfigChange): string {
  return [...change.origins, change.pull].map(pullText).join(' → ');
}

function editLine(edit: ConfigFilePlan['edits'][number]): string {
  switch (edit.kind) {
    case 'set':
      return `${code(edit.path)}: ${code(edit.from ?? '')} → ${code(edit.to ?? '')} (line ${edit.line})`;
    case 'add':
      return `${code(edit.path)} added: ${code(edit.to ?? '')} (line ${edit.line})`;
    default:
      return `${code(edit.path)} removed${edit.from !== undefined ? ` (was ${code(edit.from)})` : ''} (line ${edit.line})`;
  }
}

/** What Y keeps, as a reviewer reads it: "staging keeps `replicas: 5`; dev changed 2 → 3". */
export function keptLine(target: string, source: string, kept: ConfigFilePlan['kept'][number]): string {
  const changed =
    kept.sourceBefore !== undefined || kept.sourceAfter !== undefined
      ? `; ${escapeText(source)} changed ${code(kept.sourceBefore ?? '(unset)')} → ${code(kept.sourceAfter ?? '(unset)')}`
      : '';
  return `${escapeText(target)} keeps ${code(`${kept.path}: ${kept.target}`)} (line ${kept.line})${changed}`;
}

function refusalLine(file: string, refusal: ConfigFilePlan['refusals'][number]): string {
  const where =
    refusal.file === 'target' ? file : `${file} (${refusal.file === 'sourceAfter' ? 'after' : 'before'} the change)`;
  return `${code(where)} line ${refusal.line}: ${escapeText(refusal.reason)}`;
}

/**
 * The "Configuration" section of a promotion pull request: per change, its source pull requests
 * (provenance), per file the edits as a list, what Y keeps and what was refused.
 */
export function renderConfigSection(input: {
  source: string;
  target: string;
  app: string;
  changes: readonly CarriedChange[];
}): string[] {
  if (input.changes.length === 0) return [];
  const lines = [
    '',
    `**Configuration** from ${escapeText(input.source)}${input.app ? ` for ${code(input.app)}` : ''}, in the order it landed there`,
  ];
  for (const carried of input.changes) {
    const { change } = carried;
    const state =
      carried.outcome === 'carried' ? '' : carried.outcome === 'in-place' ? ' — already in place' : ' — not carried';
    lines.push('', `- ${provenance(change)}${state}`);
    for (const file of carried.files) {
      if (file.outcome === 'unchanged' && file.kept.length === 0 && file.refusals.length === 0) continue;
      const verb =
        file.outcome === 'created'
          ? 'created'
          : file.outcome === 'deleted'
            ? 'deleted'
            : file.outcome === 'refused'
              ? 'refused'
              : file.outcome === 'kept'
                ? 'kept as it is'
                : 'edited';
      lines.push(`  - ${code(file.path)} ${verb}`);
      for (const edit of file.edits) lines.push(`    - ${editLine(edit)}`);
      for (const kept of file.kept) lines.push(`    - ${keptLine(input.target, input.source, kept)}`);
      for (const refusal of file.refusals) lines.push(`    - ⛔ ${refusalLine(file.path, refusal)}`);
    }
  }
  return lines;
}

/** Why nothing of a change can be promoted, in a few lines (for the source PR and `/escalator plan`). */
export function blockedReason(target: string, source: string, carried: CarriedChange): string[] {
  const lines: string[] = [];
  for (const file of carried.files) {
    for (const kept of file.kept) lines.push(`${code(file.path)}: ${keptLine(target, source, kept)}`);
    for (const refusal of file.refusals) lines.push(refusalLine(file.path, refusal));
  }
  return lines.length > 0 ? lines : ['no file of the change has a counterpart Escalator can edit'];
}

/** The comment on a source pull request whose change cannot go into the next environment. */
export function renderBlockedComment(input: { target: string; app: string; carried: CarriedChange }): string {
  const { change } = input.carried;
  return [
    `Escalator did not open a promotion of this change into **${escapeText(input.target)}**${input.app ? ` for ${code(input.app)}` : ''}: none of its edits can be made there.`,
    '',
    ...blockedReason(input.target, change.source, input.carried).map((line) => `- ${line}`),
    '',
    `Where ${escapeText(input.target)} keeps its own value on purpose, nothing is needed. Otherwise change ${escapeText(input.target)}'s files by hand; \`/escalator plan\` lists the change until a promotion into ${escapeText(input.target)} merges.`,
  ].join('\n');
}
