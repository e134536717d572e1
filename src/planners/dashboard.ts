/**
 * The dashboard issue, `Escalator: environments`: one pinned issue per GitOps repository that
 * shows what runs where, the open pull requests and their gates, the holds, freezes and windows in
 * force, and what needs a person, with checkboxes that act like commands. Renovate's Dependency
 * Dashboard is the model (https://docs.renovatebot.com/key-concepts/dashboard/): one issue, kept
 * current, edited only when its text changes, a ticked box as the way to ask.
 *
 * Pure: state comes in as data, time as `now`; the body is text, and the same state always gives
 * the same bytes (the job edits the issue only when they differ).
 */
import type { AppHealth } from './health.js';
import { describeFreeze, type Freeze } from './freeze.js';
import { cell, code, escapeText } from './markdown.js';

export const DASHBOARD_TITLE = 'Escalator: environments';
/** The first line of the body: how Escalator finds its own issue again (with its bot as author). */
export const DASHBOARD_MARKER = '<!-- escalator:dashboard v1 -->';
/** GitHub refuses an issue body longer than this many characters. */
export const ISSUE_BODY_LIMIT = 65_536;

export interface DashboardVersion {
  name: string;
  tag: string;
  digest?: string;
}

/** One app in one environment. */
export interface DashboardCell {
  app: string;
  versions: DashboardVersion[];
  /** When the environment was first seen running these versions (ISO). */
  since?: string;
  /** What the agent last reported; undefined: no report (or health is not configured). */
  health?: AppHealth;
  /** The environment promoted into from here, and how much of its soak is left (ms; 0: done). */
  soak?: { target: string; remainingMs: number };
}

export interface DashboardEnvironment {
  name: string;
  /** `registry` or the environment it promotes from. */
  from: string;
  autoMerge: boolean;
  cells: DashboardCell[];
  /** The sentence of its window gate (src/planners/windows.ts), when it has windows. */
  window?: { open: boolean; sentence: string };
  /** Holds on it: app `''` for the whole environment. */
  holds: Array<{ app: string; by: string }>;
  /**
   * Configuration changes merged into `from` that wait to come here (docs/configuration.md,
   * "Promote configuration"), per app: the source pull requests (`#12`), and how many of them
   * cannot be promoted (every edit meets a value this environment keeps, or is refused).
   */
  configWaiting?: Array<{ app: string; pulls: number[]; blocked: number }>;
}

export interface DashboardPull {
  number: number;
  title: string;
  kind: 'bump' | 'promote';
  environment: string;
  /** `''` for a grouped promotion. */
  app: string;
  /** Its gates as the promotion job last decided them; empty for bumps. */
  gates: Array<{ name: string; state: 'passed' | 'pending' | 'failed'; detail: string }>;
}

/** Something only a person can settle: a file Escalator refused to edit, a job that failed for good. */
export interface DashboardAttention {
  what: string;
  reason: string;
  at: string;
}

export interface DashboardInput {
  /** `owner/repo`. */
  repository: string;
  environments: DashboardEnvironment[];
  pulls: DashboardPull[];
  freezes: Freeze[];
  attention: DashboardAttention[];
  now: number;
}

/** What a ticked box asks for, as the command it stands for. */
export type DashboardAction =
  | { kind: 'promote'; environment: string; app: string }
  | { kind: 'hold' | 'release'; environment: string }
  | { kind: 'unfreeze'; environment: string };

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/;

/** The marker at the end of a box: `<!-- escalator:do promote prod hello -->`. */
function actionMarker(action: DashboardAction): string {
  const words =
    action.kind === 'promote' ? [action.kind, action.environment, action.app] : [action.kind, action.environment];
  return `<!-- escalator:do ${words.join(' ')} -->`;
}

/** The command a box stands for, as a person would comment it. */
export function actionCommand(action: DashboardAction): string {
  return action.kind === 'promote'
    ? `/escalator promote ${action.environment} ${action.app}`
    : `/escalator ${action.kind} ${action.environment}`;
}

function box(label: string, action: DashboardAction): string {
  return `- [ ] ${label} ${actionMarker(action)}`;
}

function parseAction(text: string): DashboardAction | undefined {
  const words = text.trim().split(/\s+/);
  if (!words.slice(1).every((word) => NAME.test(word))) return undefined;
  const [kind, environment, app] = words;
  if (!environment) return undefined;
  if (kind === 'promote' && app && words.length === 3) return { kind, environment, app };
  if ((kind === 'hold' || kind === 'release' || kind === 'unfreeze') && words.length === 2)
    return { kind, environment };
  return undefined;
}

/** The boxes of a body, by their marker, ticked or not. Only list items count, as GitHub's task lists. */
function boxes(body: string): Map<string, boolean> {
  const found = new Map<string, boolean>();
  for (const line of body.split(/\r\n?|\n/)) {
    const match = /^ {0,6}- \[([ xX])\] .*<!-- escalator:do ([^>]{1,200}) -->\s*$/.exec(line);
    if (match) found.set(match[2]!.trim(), match[1] !== ' ');
  }
  return found;
}

/**
 * The boxes a person ticked in one edit: unticked (or absent) before, ticked after. A box that
 * was already ticked stays a no-op, so an unrelated edit never acts twice.
 */
export function tickedActions(before: string, after: string): DashboardAction[] {
  const was = boxes(before);
  const actions: DashboardAction[] = [];
  for (const [text, ticked] of boxes(after)) {
    if (!ticked || was.get(text) === true) continue;
    const action = parseAction(text);
    if (action) actions.push(action);
  }
  return actions;
}

/** `2026-12-05 10:00 UTC`. */
function when(iso: string): string {
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)} UTC`;
}

/** `45s`, `12m`, `2h 10m`, `3d 4h`. */
export function span(ms: number): string {
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 24) return m % 60 ? `${h}h ${m % 60}m` : `${h}h`;
  const d = Math.floor(h / 24);
  return h % 24 ? `${d}d ${h % 24}h` : `${d}d`;
}

function versionText(versions: readonly DashboardVersion[]): string {
  if (versions.length === 0) return '—';
  return versions
    .map((v) => {
      const short = v.name.slice(v.name.lastIndexOf('/') + 1);
      const digest = v.digest ? ` ${code(v.digest.replace(/^sha256:/, '').slice(0, 7))}` : '';
      return `${escapeText(short)} ${code(v.tag)}${digest}`;
    })
    .join(', ');
}

function healthText(health: AppHealth | undefined, now: number): string {
  if (!health) return 'no report';
  if (health.health === 'healthy' && health.sync === 'synced' && health.healthySince)
    return `healthy for ${span(now - Date.parse(health.healthySince))}`;
  if (health.degradedSince)
    return `**${escapeText(health.health)}** for ${span(now - Date.parse(health.degradedSince))}`;
  return `${escapeText(health.health)}, ${escapeText(health.sync)}`;
}

function row(c: DashboardCell, now: number): string {
  const soak = c.soak
    ? `${c.soak.remainingMs > 0 ? `${span(c.soak.remainingMs)} left` : 'done'} for ${escapeText(c.soak.target)}`
    : '';
  return `| ${cell(escapeText(c.app))} | ${cell(versionText(c.versions))} | ${c.since ? when(c.since) : '—'} | ${cell(healthText(c.health, now))} | ${soak} |`;
}

function gateText(gates: DashboardPull['gates']): string {
  if (gates.length === 0) return '';
  return gates.map((g) => `${g.state === 'passed' ? '✅' : g.state === 'pending' ? '⏳' : '⛔'} ${g.name}`).join(' · ');
}

/** `- configuration of `hello` differs from dev: #12, #14 wait to come here (1 cannot be promoted)`, a line per app. */
function configLines(env: DashboardEnvironment): string[] {
  const waiting = env.configWaiting ?? [];
  if (waiting.length === 0) return [];
  return [
    ...waiting.slice(0, 50).map(
      (entry) =>
        `- configuration${entry.app ? ` of ${code(entry.app)}` : ''} differs from ${escapeText(env.from)}: ${entry.pulls
          .slice(0, 10)
          .map((n) => `#${n}`)
          .join(
            ', ',
          )}${entry.pulls.length > 10 ? ` and ${entry.pulls.length - 10} more` : ''} wait${entry.pulls.length === 1 ? 's' : ''} to come here${entry.blocked > 0 ? ` (${entry.blocked} cannot be promoted: /escalator plan says why)` : ''}`,
    ),
    ...(waiting.length > 50 ? [`- … and ${waiting.length - 50} more apps with configuration waiting`] : []),
    '',
  ];
}

/** A section that may be cut to fit: a head, its lines, and what to say when some are left out. */
interface Section {
  head: string[];
  lines: string[];
  tail: string[];
  /** How many of `lines` are shown. */
  shown: number;
  /** Said in place of the lines left out. */
  cut: (left: number) => string;
}

function sectionText(section: Section): string {
  const left = section.lines.length - section.shown;
  return [
    ...section.head,
    ...section.lines.slice(0, section.shown),
    ...(left > 0 ? [section.cut(left)] : []),
    ...section.tail,
  ].join('\n');
}

/**
 * The issue body. Every environment is folded in its own `<details>`; when the whole would pass
 * GitHub's limit, rows are left out of the largest sections first, each saying how many and why.
 */
export function renderDashboard(input: DashboardInput, limit = ISSUE_BODY_LIMIT): string {
  const { now } = input;
  const intro = [
    DASHBOARD_MARKER,
    `What runs where in ${escapeText(input.repository)}, kept current by Escalator (docs/controls.md). Tick a box to act: Escalator checks that you have write access, answers here and unticks it.`,
    '',
  ];

  const controls: string[] = ['## Holds, freezes and windows', ''];
  for (const freeze of input.freezes) {
    const scope = freeze.scope === '*' ? 'all' : freeze.scope;
    controls.push(`- ⛔ ${escapeText(describeFreeze(freeze))}`);
    controls.push(`  ${box(`unfreeze ${escapeText(scope)}`, { kind: 'unfreeze', environment: scope })}`);
  }
  for (const env of input.environments) {
    for (const hold of env.holds)
      controls.push(
        `- ✋ promotion into **${escapeText(env.name)}**${hold.app ? ` for ${code(hold.app)}` : ''} is on hold (by ${escapeText(hold.by)})`,
      );
    if (env.window && !env.window.open) controls.push(`- 🕘 ${escapeText(env.window.sentence)}`);
  }
  if (controls.length === 2) controls.push('Nothing holds promotions back.');
  controls.push('');
  const promoted = input.environments.filter((env) => env.from !== 'registry');
  if (promoted.length > 0) {
    for (const env of promoted)
      controls.push(
        env.holds.some((h) => h.app === '')
          ? box(`release ${escapeText(env.name)}`, { kind: 'release', environment: env.name })
          : box(`hold ${escapeText(env.name)}`, { kind: 'hold', environment: env.name }),
      );
    controls.push('');
  }

  const sections: Section[] = [];
  const promotions = input.pulls.filter((p) => p.kind === 'promote');
  const bumps = input.pulls.filter((p) => p.kind === 'bump');
  sections.push({
    head: ['## Open pull requests', '', ...(input.pulls.length === 0 ? ['None.'] : [])],
    lines: [
      ...promotions.flatMap((p) => [
        `- #${p.number} ${escapeText(p.title)}${p.gates.length ? ` — ${gateText(p.gates)}` : ''}`,
        ...p.gates.filter((g) => g.state !== 'passed').map((g) => `  - ${g.name}: ${escapeText(g.detail)}`),
        ...(p.app
          ? [
              `  ${box(`promote ${escapeText(p.app)} to ${escapeText(p.environment)} now`, { kind: 'promote', environment: p.environment, app: p.app })}`,
            ]
          : []),
      ]),
      ...bumps.map((p) => `- #${p.number} ${escapeText(p.title)}`),
    ],
    tail: [''],
    shown: Number.MAX_SAFE_INTEGER,
    cut: (left) => `- … and ${left} more lines not shown: the issue body is limited to 65,536 characters.`,
  });
  sections.push({
    head: ['## Needs a person', '', ...(input.attention.length === 0 ? ['Nothing.'] : [])],
    lines: input.attention.map((a) => `- ${escapeText(a.what)} (${when(a.at)}): ${escapeText(a.reason)}`),
    tail: [''],
    shown: Number.MAX_SAFE_INTEGER,
    cut: (left) => `- … and ${left} more not shown: the issue body is limited to 65,536 characters.`,
  });
  for (const env of input.environments) {
    const cells = [...env.cells].sort((a, b) => (a.app < b.app ? -1 : a.app > b.app ? 1 : 0));
    sections.push({
      head: [
        '<details>',
        `<summary><b>${escapeText(env.name)}</b> — ${cells.length} app${cells.length === 1 ? '' : 's'}, from ${escapeText(env.from)}${env.autoMerge ? ', auto-merge' : ''}${env.window ? `, window ${env.window.open ? 'open' : 'closed'}` : ''}${env.configWaiting?.length ? `, configuration differs from ${escapeText(env.from)}` : ''}</summary>`,
        '',
        `| app | version | since | health | soak |`,
        '|---|---|---|---|---|',
      ],
      lines: cells.map((c) => row(c, now)),
      tail: ['', ...configLines(env), '</details>', ''],
      shown: Number.MAX_SAFE_INTEGER,
      cut: (left) =>
        `| … | ${left} more app${left === 1 ? '' : 's'} not shown: the issue body is limited to 65,536 characters | | | |`,
    });
  }
  for (const section of sections) section.shown = section.lines.length;

  const footer = `<sub>Escalator edits this issue; edits other than ticking a box are overwritten.</sub>\n`;
  const assemble = (): string => {
    const [pullSection, attentionSection, ...envSections] = sections;
    const cut = sections.some((section) => section.shown < section.lines.length);
    return [
      ...intro,
      ...(cut
        ? [
            '> [!NOTE]',
            "> Too much to show within GitHub's 65,536 characters: the largest sections below leave rows out and say how many.",
            '',
          ]
        : []),
      ...controls,
      sectionText(pullSection!),
      sectionText(attentionSection!),
      '## Environments',
      '',
      ...envSections.map(sectionText),
      footer,
    ].join('\n');
  };
  // Cut the largest sections first, down to the next largest, until the body fits: what is left
  // is spread over the sections rather than spent on one.
  let body = assemble();
  for (let guard = 0; body.length > limit && guard < 10_000; guard++) {
    const sizes = sections.map((section) => sectionText(section).length);
    const order = sections.map((_, i) => i).sort((a, b) => sizes[b]! - sizes[a]!);
    const largest = sections[order[0]!]!;
    if (largest.shown === 0) break;
    const over = body.length - limit;
    const cuttable = sections.filter((section) => section.shown > 0).length;
    const share = Math.max(sizes[order[0]!]! - (sizes[order[1]!] ?? 0), Math.ceil(over / cuttable));
    const average = Math.max(1, Math.ceil(largest.lines.slice(0, largest.shown).join('\n').length / largest.shown));
    largest.shown = Math.max(0, largest.shown - Math.max(1, Math.ceil(Math.min(over, share) / average)));
    body = assemble();
  }
  return body;
}
