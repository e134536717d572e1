import {
  editImages,
  editOptionsFor,
  kustomizationSiblings,
  kustomizeViews,
  listImages,
  type EditSettings,
} from './image-edit/index.js';
import { cell, code, escapeText, refusalLines, refusalList, type Refusal } from './markdown.js';
import type { GateEnforcement } from './promotion-gates.js';
import { renderMarker, type PullMarker } from './pull-marker.js';
import { renderRollbackTitle } from './rollback.js';

export interface EnvFile {
  path: string;
  text: string;
}

/** The version of one image an environment runs. */
export interface RunningVersion {
  name: string;
  /** As the source environment's file spells it. */
  repository: string;
  tag: string;
  digest?: string;
}

/** What an environment's files run, image by image (the first use of each image wins). */
export function readVersions(files: readonly EnvFile[]): Map<string, RunningVersion> {
  const versions = new Map<string, RunningVersion>();
  // An image the environment's kustomizations rename to a mirror on every render runs as the mirror.
  const views = kustomizeViews(files);
  for (const file of files) {
    for (const use of listImages(file.text, { path: file.path, views: views.get(file.path) ?? [] }).uses) {
      if (!use.tag || versions.has(use.name)) continue;
      versions.set(use.name, {
        name: use.name,
        repository: use.written,
        tag: use.tag,
        ...(use.digest ? { digest: use.digest } : {}),
      });
    }
  }
  return versions;
}

export interface PromotionRow {
  app: string;
  image: string;
  from?: string;
  to: string;
  digest?: string;
}

export interface PromotionInput {
  /** Environment promoted from (X) and into (Y). */
  source: string;
  target: string;
  /** `''` for a grouped PR covering every app. */
  app: string;
  /** Per app: X's files and Y's files. Apps with no Y files are reported, not created. */
  apps: Array<{ app: string; sourceFiles: EnvFile[]; targetFiles: EnvFile[]; versions?: Map<string, RunningVersion> }>;
  /** Provenance carried over from the PRs that brought the versions into X. */
  sources?: string[];
  gates?: Array<{ name: string; state: 'passed' | 'pending' | 'failed'; detail: string }>;
  /** Whether the base branch requires the gate checks; a note on the pull request when it does not. */
  enforcement?: GateEnforcement;
  /** The configuration's editor settings (Flux policies, dotted Helm keys); see `editSettingsFrom`. */
  editing?: EditSettings;
  /** What the source runs and how healthy, one line per app (when the source reports health): `staging runs hello 1.4.2, healthy for 2h 10m (…)`. */
  health?: string[];
  /** Why this pull request was opened, when Escalator opened it on its own for a reason a reviewer must read (an automatic rollback). */
  because?: string;
  /** The "What changed" section (src/planners/release-notes.ts), rendered by the job. */
  notes?: string;
  /**
   * A rollback: `apps[].versions` are versions the target ran before. `source` is the environment
   * promotions come from (what is not proposed again on its own); `restores`, the commit that last
   * brought the versions gone back to into the target, and the pull requests behind it when known.
   */
  rollback?: { source: string; restores?: { sha: string; sources: string[] } | undefined };
  /**
   * Configuration changes carried with the versions (src/planners/config-carry.ts): the files they
   * write and delete (`apps[].targetFiles` already hold what they write, so image edits go on top),
   * the waiting changes carried or reported (the marker's `config`), how many of them write
   * something, and the body's "Configuration" section.
   */
  config?: {
    updates: Array<{ path: string; content: string }>;
    deletions: string[];
    ids: string[];
    carried: number;
    section: string[];
  };
}

export interface PromotionPlan {
  branch: string;
  title: string;
  body: string;
  commitMessage: string;
  marker: PullMarker;
  updates: Array<{ path: string; content: string }>;
  /** Files the promotion deletes (a configuration change removed them in the source). */
  deletions: string[];
  rows: PromotionRow[];
  /** How many configuration changes the promotion writes. */
  configCarried: number;
  refused: Refusal[];
  /** Apps that run in X but have no files in Y. */
  missing: string[];
}

/** `escalator/promote/<env>[/<app>]`. */
export function promotionBranch(target: string, app: string): string {
  return app ? `escalator/promote/${target}/${app}` : `escalator/promote/${target}`;
}

/**
 * Plan the promotion of X's image versions into Y, app by app:
 * 1. read the versions X runs (tag and digest together)
 * 2. in Y's files, set each image X also runs to X's version — and nothing else: replicas,
 *    hostnames and patches are Y's own and never travel
 * 3. report apps X has and Y lacks instead of creating them
 */
export function planPromotion(input: PromotionInput): PromotionPlan {
  const updates: PromotionPlan['updates'] = [];
  const rows: PromotionRow[] = [];
  const refused: PromotionPlan['refused'] = [];
  const missing: string[] = [];
  const images: PullMarker['images'] = [];
  for (const app of input.apps) {
    if (app.targetFiles.length === 0) {
      if (app.sourceFiles.length > 0 || app.versions) missing.push(app.app);
      continue;
    }
    // A rollback passes the versions to restore instead of reading the source environment.
    const versions = app.versions ?? readVersions(app.sourceFiles);
    const before = readVersions(app.targetFiles);
    // The editor decides per rendered image: renames among the target's kustomizations count.
    const views = kustomizeViews(app.targetFiles);
    const siblings = kustomizationSiblings(app.targetFiles.map((file) => file.path));
    for (const file of app.targetFiles) {
      let text = file.text;
      for (const version of versions.values()) {
        const current = before.get(version.name);
        if (!current) continue;
        const result = editImages(
          text,
          { repository: version.repository, tag: version.tag, ...(version.digest ? { digest: version.digest } : {}) },
          {
            path: file.path,
            pinDigest: version.digest !== undefined,
            views: views.get(file.path) ?? [],
            siblings: siblings.get(file.path) ?? [],
            origin: input.rollback ? 'rollback' : 'promotion',
            ...editOptionsFor(input.editing, version.repository),
          },
        );
        if (result.refused.length > 0) {
          for (const refusal of result.refused)
            refused.push({ path: file.path, reason: refusal.reason, ...(refusal.line ? { line: refusal.line } : {}) });
          continue;
        }
        for (const left of result.left)
          refused.push({
            path: file.path,
            reason: left.reason,
            ...(left.line ? { line: left.line } : {}),
            left: true,
          });
        if (result.changed.length > 0) text = result.text;
      }
      if (text !== file.text) updates.push({ path: file.path, content: text });
    }
    for (const version of versions.values()) {
      const current = before.get(version.name);
      if (!current || (current.tag === version.tag && (current.digest ?? version.digest) === version.digest)) continue;
      if (!updates.some((update) => app.targetFiles.some((file) => file.path === update.path))) continue;
      rows.push({
        app: app.app,
        image: version.name,
        from: current.tag,
        to: version.tag,
        ...(version.digest ? { digest: version.digest } : {}),
      });
      images.push({
        repository: version.name,
        tag: version.tag,
        ...(version.digest ? { digest: version.digest } : {}),
      });
    }
  }
  const marker: PullMarker = {
    kind: 'promote',
    environment: input.target,
    app: input.app,
    images,
    ...(input.sources?.length ? { sources: input.sources } : {}),
    ...(input.config?.ids.length ? { config: input.config.ids } : {}),
  };
  const configCarried = input.config?.carried ?? 0;
  const title = input.rollback
    ? renderRollbackTitle(input.target, input.app, rows)
    : renderPromotionTitle(input.target, input.app, rows, configCarried > 0);
  // Configuration writes first; an image edit of the same file was planned on top of it.
  const written = new Set(updates.map((update) => update.path));
  const allUpdates = [...(input.config?.updates ?? []).filter((update) => !written.has(update.path)), ...updates];
  const configLines =
    configCarried > 0
      ? [
          `configuration: ${configCarried} change${configCarried === 1 ? '' : 's'} from ${input.source}`,
          ...[
            ...(input.config?.updates ?? []).map((update) => `  ${update.path}`),
            ...(input.config?.deletions ?? []).map((path) => `  ${path} (deleted)`),
          ],
        ]
      : [];
  return {
    branch: promotionBranch(input.target, input.app),
    title,
    body: renderPromotionBody(input, rows, refused, missing, marker),
    commitMessage: `${title}\n\n${[...rows.map((row) => `${row.app}: ${row.image} ${row.from ?? '(unset)'} -> ${row.to}${row.digest ? ` (${row.digest})` : ''}`), ...configLines].join('\n')}\n`,
    marker,
    updates: allUpdates,
    deletions: input.config?.deletions ?? [],
    rows,
    configCarried,
    refused,
    missing,
  };
}

function renderPromotionTitle(target: string, app: string, rows: PromotionRow[], config = false): string {
  const versions = [...new Set(rows.map((row) => row.to))];
  const version = versions.length === 1 ? ` ${versions[0]}` : '';
  if (rows.length === 0 && config) return `Promote ${app ? `${app} ` : ''}configuration to ${target}`;
  const what = config ? ' and its configuration' : '';
  if (app) return `Promote ${app}${version}${what} to ${target}`;
  const apps = [...new Set(rows.map((row) => row.app))];
  return apps.length === 1
    ? `Promote ${apps[0]}${version}${what} to ${target}`
    : `Promote ${apps.length} apps${what} to ${target}`;
}

function renderPromotionBody(
  input: PromotionInput,
  rows: PromotionRow[],
  refused: PromotionPlan['refused'],
  missing: string[],
  marker: PullMarker,
): string {
  const lines = [
    input.rollback
      ? `Escalator rolls **${escapeText(input.target)}** back to versions it ran before.`
      : `Escalator promotes what **${escapeText(input.source)}** runs into **${escapeText(input.target)}**.`,
    ...(rows.length > 0 || !input.config
      ? [
          '',
          '| App | Image | From | To | Digest |',
          '|---|---|---|---|---|',
          ...rows.map(
            (row) =>
              `| ${cell(escapeText(row.app || '—'))} | ${cell(code(row.image))} | ${row.from ? cell(code(row.from)) : '—'} | ${cell(code(row.to))} | ${row.digest ? cell(code(row.digest)) : '—'} |`,
          ),
        ]
      : []),
    ...(input.config?.section ?? []),
  ];
  const restores = input.rollback?.restores;
  if (restores) {
    // A full commit SHA is linked by GitHub; `#12` links the pull request; the rest is escaped.
    const pulls = restores.sources.map((source) => (/^#\d{1,9}$/.test(source) ? source : escapeText(source)));
    lines.push(
      '',
      `**Provenance:** ${rows.length ? [...new Set(rows.map((row) => code(row.to)))].join(', ') : 'these versions'} last came into ${escapeText(input.target)} with commit ${/^[0-9a-f]{40}$/.test(restores.sha) ? restores.sha : escapeText(restores.sha)}${pulls.length ? ` (${pulls.join(' → ')})` : ''}`,
    );
  } else if (input.sources?.length && !input.rollback) {
    // `#12` links the pull request; anything else (markers are repository text) is escaped.
    lines.push(
      '',
      `**Provenance:** ${input.sources.map((source) => (/^#\d{1,9}$/.test(source) ? source : escapeText(source))).join(' → ')} → this pull request`,
    );
  }
  if (input.because) lines.push('', `**Why:** ${escapeText(input.because)}`);
  if (input.health?.length) {
    lines.push('', '**Health**', '');
    for (const line of input.health) lines.push(`- ${escapeText(line)}`);
  }
  if (input.gates?.length) {
    lines.push('', '**Gates**', '');
    for (const gate of input.gates)
      lines.push(
        `- ${gate.state === 'passed' ? '✅' : gate.state === 'pending' ? '⏳' : '⛔'} ${escapeText(gate.name)}: ${escapeText(gate.detail)}`,
      );
  }
  lines.push(...enforcementLines(input.enforcement));
  if (missing.length > 0) {
    lines.push(
      '',
      `> [!NOTE]`,
      `> Not promoted — these apps run in ${escapeText(input.source)} but have no files in ${escapeText(input.target)}: ${missing.map((app) => code(app)).join(', ')}. Add their overlay to promote them.`,
    );
  }
  lines.push(...refusalLines(refused));
  if (input.notes) lines.push('', input.notes);
  lines.push(
    '',
    input.rollback
      ? `<sub>Merging this pull request rolls ${escapeText(input.target)} back to these versions. Escalator proposes the versions it takes out again only when ${escapeText(input.rollback.source)} runs another version, or when a person comments /escalator promote.</sub>`
      : `<sub>Merging this pull request deploys these versions to ${escapeText(input.target)}. A newer version in ${escapeText(input.source)} updates it.</sub>`,
    renderMarker(marker),
  );
  return `${lines.join('\n')}\n`;
}

/** What a promotion run did, for the person whose command asked for it. */
export type PromotionResult =
  | { kind: 'opened' | 'updated'; pull: number }
  | { kind: 'closed'; pull: number }
  | { kind: 'nothing' }
  | { kind: 'dry-run' };

/** "Promotion into **prod** for `world`" (or "Rollback of …"): how every reply about one promotion starts. */
export function promotionSubject(input: { target: string; app: string; rollback: boolean }): string {
  return `${input.rollback ? 'Rollback of' : 'Promotion into'} **${escapeText(input.target)}**${input.app ? ` for ${code(input.app)}` : ''}`;
}

/**
 * The reply to `/escalator promote` or `/escalator rollback` once the promotion job has run: the
 * pull request, or why there is none (already running those versions, files refused, apps without
 * files in the target). A command never ends in "queued" and then silence.
 */
export function renderPromotionReply(
  input: { source: string; target: string; app: string; rollback: boolean; requestedBy?: string | undefined },
  plan: Pick<PromotionPlan, 'title' | 'rows' | 'refused' | 'missing'>,
  gates: PromotionInput['gates'],
  result: PromotionResult,
): string {
  const what = promotionSubject(input);
  const to = input.requestedBy ? `@${input.requestedBy} ` : '';
  const lines: string[] = [];
  switch (result.kind) {
    case 'opened':
    case 'updated':
      lines.push(
        `${to}${what}: #${result.pull} ${result.kind === 'opened' ? 'opened' : 'updated'} (${escapeText(plan.title)}).`,
      );
      for (const gate of gates ?? [])
        lines.push(
          `- ${gate.state === 'passed' ? '✅' : gate.state === 'pending' ? '⏳' : '⛔'} ${escapeText(gate.name)}: ${escapeText(gate.detail)}`,
        );
      break;
    case 'closed':
      lines.push(
        `${to}${what}: nothing to change, ${escapeText(input.target)} already runs these versions; #${result.pull} was closed.`,
      );
      break;
    case 'dry-run':
      lines.push(
        `${to}${what}: dry run (\`dryRun: true\`), nothing written.${plan.rows.length ? ` The plan is the \`escalator/plan\` check on the default branch: ${escapeText(plan.title)}.` : ' Nothing would change.'}`,
      );
      break;
    case 'nothing':
      lines.push(
        plan.refused.length > 0
          ? `${to}${what}: no pull request, because Escalator could not change these files safely:`
          : input.rollback
            ? `${to}${what}: nothing to change, ${escapeText(input.target)} already runs its previous versions.`
            : `${to}${what}: nothing to change, ${escapeText(input.target)} already runs what ${escapeText(input.source)} runs.`,
      );
      break;
  }
  if (result.kind === 'nothing' && plan.refused.length > 0) lines.push(...refusalList(plan.refused));
  else if (plan.refused.length > 0) lines.push(...refusalLines(plan.refused));
  if (plan.missing.length > 0)
    lines.push(
      '',
      `Not promoted: ${plan.missing.map((app) => code(app)).join(', ')} run${plan.missing.length === 1 ? 's' : ''} in ${escapeText(input.source)} but ha${plan.missing.length === 1 ? 's' : 've'} no files in ${escapeText(input.target)}; add the overlay to promote ${plan.missing.length === 1 ? 'it' : 'them'}.`,
    );
  return lines.join('\n');
}

/** One promotion `/escalator plan` found: into which environment, for which app, and what it would do. */
export interface PlannedPromotion {
  source: string;
  target: string;
  app: string;
  plan: Pick<PromotionPlan, 'rows' | 'refused' | 'missing'>;
  gates: NonNullable<PromotionInput['gates']>;
  /**
   * Configuration changes waiting for the target (src/planners/config-carry.ts): each with its
   * source pull request, whether it would be carried, and why not when it would not.
   */
  config?: Array<{ app: string; pull: string; outcome: 'carried' | 'in-place' | 'blocked'; why: string[] }>;
}

/**
 * The answer to `/escalator plan`: each promotion that would really change something, with its
 * gates, and each one that could not be made with the reason. Rows that would change nothing are
 * left out, so the table never promises a pull request that will not come.
 */
export function renderPlanReply(planned: readonly PlannedPromotion[]): string {
  const lines = ['**Escalator plan** (nothing was changed)', ''];
  const rows = planned.flatMap((item) => item.plan.rows.map((row) => ({ item, row })));
  const gatesText = (item: PlannedPromotion): string => {
    const waiting = item.gates.filter((gate) => gate.state !== 'passed');
    return waiting.length === 0
      ? '✅ ready'
      : waiting
          .map(
            (gate) => `${gate.state === 'pending' ? '⏳' : '⛔'} ${escapeText(gate.name)}: ${escapeText(gate.detail)}`,
          )
          .join('<br>');
  };
  const changes = planned.flatMap((item) => (item.config ?? []).map((change) => ({ item, change })));
  if (rows.length > 0 || changes.length > 0) {
    if (rows.length > 0) lines.push('| Into | App | Image | Now | Would become | Gates |', '|---|---|---|---|---|---|');
    for (const { item, row } of rows)
      lines.push(
        `| ${cell(escapeText(item.target))} | ${cell(escapeText(row.app || '—'))} | ${cell(code(row.image))} | ${row.from ? cell(code(row.from)) : 'not set'} | ${cell(code(row.to))}${row.digest ? ` (${cell(code(row.digest.slice(0, 19)))}…)` : ''} | ${cell(gatesText(item))} |`,
      );
    if (changes.length > 0)
      lines.push(
        ...(rows.length > 0 ? [''] : []),
        '**Configuration changes waiting**',
        '',
        '| Into | App | Change | Would be | Gates |',
        '|---|---|---|---|---|',
        ...changes.map(
          ({ item, change }) =>
            `| ${cell(escapeText(item.target))} | ${cell(escapeText(change.app || '—'))} | ${cell(change.pull)} | ${change.outcome === 'carried' ? 'carried' : change.outcome === 'in-place' ? 'already in place' : `⛔ not promoted: ${cell(change.why.join('<br>'))}`} | ${change.outcome === 'carried' ? cell(gatesText(item)) : '—'} |`,
        ),
      );
  } else lines.push('Every environment already runs what its source runs: no promotion would change anything.');
  for (const item of planned) {
    const where = `**${escapeText(item.target)}**${item.app ? ` for ${code(item.app)}` : ''}`;
    if (item.plan.refused.length > 0)
      lines.push(
        '',
        `${where}: these files cannot be promoted from ${escapeText(item.source)} as they are:`,
        ...refusalList(item.plan.refused),
      );
    if (item.plan.missing.length > 0)
      lines.push(
        '',
        `${where}: ${item.plan.missing.map((app) => code(app)).join(', ')} run${item.plan.missing.length === 1 ? 's' : ''} in ${escapeText(item.source)} but ha${item.plan.missing.length === 1 ? 's' : 've'} no files in ${escapeText(item.target)}.`,
      );
  }
  return lines.join('\n');
}

/**
 * The warning a promotion pull request carries while GitHub does not hold its merge to the gates:
 * a check nobody requires is a signal a person can merge past. Empty when every gate is required.
 */
export function enforcementLines(enforcement: GateEnforcement | undefined): string[] {
  if (!enforcement) return [];
  const branch = code(enforcement.branch);
  if (enforcement.unreadable)
    return [
      '',
      '> [!WARNING]',
      `> Escalator could not read whether ${branch} requires its gate checks (${escapeText(enforcement.unreadable)}). Unless a ruleset or branch protection requires them, GitHub lets this pull request merge before they pass (docs/gates.md).`,
    ];
  if (enforcement.unrequired.length > 0) {
    const names = enforcement.unrequired.map((name) => code(name));
    const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
    return [
      '',
      '> [!WARNING]',
      `> ${list} ${names.length === 1 ? 'is not a required check' : 'are not required checks'} on ${branch}: GitHub lets anyone with write access merge this pull request before ${names.length === 1 ? 'it passes' : 'they pass'}. Require ${names.length === 1 ? 'it' : 'them'} in a ruleset or branch protection (docs/gates.md).`,
    ];
  }
  if (enforcement.adminsExempt)
    return [
      '',
      '> [!NOTE]',
      `> ${branch} requires the gate checks of non-administrators only: an administrator can merge this pull request before they pass (tick "Do not allow bypassing the above settings", docs/gates.md).`,
    ];
  return [];
}
