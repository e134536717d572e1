/**
 * The health gate of one promotion: the source environment must run the promoted versions synced
 * and healthy, on a revision that contains the commit where they landed there, and, when the
 * promotion carries configuration changes, the commit where the newest of them merged there.
 * Pure: the recorded health, whether its revision contains those commits (the job asks GitHub's
 * compare API) and `now` come in as data.
 */
import type { AppHealth, HealthSource } from './health.js';

/** What the gate knows about one app of the promotion. */
export interface HealthGateApp {
  app: string;
  /** The promoted versions as a reader says them: `hello 1.4.2`. */
  running: string;
  /** The commit where these versions landed in the source environment, and when it was seen; undefined: not recorded. */
  merge?: { sha: string; at: string };
  /** What the source's agent last said about this app; undefined: nothing yet. */
  health?: AppHealth;
  /** Whether `health.revision` contains `merge.sha` (compare status `ahead` or `identical`); undefined: not asked. */
  containsMerge?: boolean;
  /**
   * The newest configuration change of this app the promotion carries (`newestChange`): its merge
   * commit into the source, when it landed there, and its pull request. The agent must report a
   * commit at or after it, synced and healthy; soak counts from no earlier than its landing.
   */
  config?: ConfigLanding;
  /**
   * Whether the commit the agent last named (`health.reported ?? health.revision`: a report for
   * commit R is about the latest commit ≤ R, so R must contain the change) contains `config.sha`;
   * undefined: not asked.
   */
  containsConfig?: boolean;
  /** The agent object expected to report this app (from the environment's `health`). */
  expected: Pick<HealthSource, 'agent' | 'object'>;
  /** Added to a failed verdict: what became of the source's rollback of this app (`rollbackNote`). */
  note?: string;
}

/** Where a configuration change landed in the source: its merge commit, when, and its pull request. */
export interface ConfigLanding {
  sha: string;
  at: string;
  pull?: number;
}

/** The newest of the configuration changes a promotion carries for one app (by landing time); undefined: none. */
export function newestChange(changes: readonly ConfigLanding[]): ConfigLanding | undefined {
  let newest: ConfigLanding | undefined;
  for (const change of changes) if (!newest || Date.parse(change.at) > Date.parse(newest.at)) newest = change;
  return newest;
}

export interface HealthGateInput {
  source: string;
  apps: HealthGateApp[];
  /** A degraded spell shorter than this does not fail the gate. */
  tolerateMs: number;
  tolerateText: string;
  /** How long after the merge the agent has to report it synced and healthy. */
  timeoutMs: number;
  timeoutText: string;
  now: number;
}

export type AppVerdict =
  | { state: 'passed'; healthySince: string; line: string }
  | { state: 'pending'; recheckAt: number; line: string; healthySince?: string }
  | { state: 'failed'; line: string; degraded: boolean };

/** The `health` gate (a `Gate` of promotion-gates.ts, which imports this module). */
export interface HealthGate {
  name: 'health';
  state: 'passed' | 'pending' | 'failed';
  detail: string;
}

export interface HealthGateDecision {
  gate: HealthGate;
  /**
   * Per app (same order as the input): since when it ran the promoted versions healthy, when it
   * does (kept through a degraded spell shorter than `tolerate`). Soak counts from here.
   */
  healthySince: Array<string | undefined>;
  /** The earliest time the gate may change without a new report (a timeout, a degraded spell outlasting `tolerate`). */
  recheckAt?: number;
  /** One line per app for the pull request body: what the source runs and how it is. */
  lines: string[];
}

/** `Argo CD app hello-staging`, `Flux Kustomization flux-system/apps-staging`, `commit status kustomization/apps/1a2b`. */
export function describeSource(source: Pick<HealthSource, 'agent' | 'object'>): string {
  switch (source.agent) {
    case 'argocd':
      return `Argo CD app ${source.object}`;
    case 'flux':
      return `Flux object ${source.object}`;
    default:
      return `commit status ${source.object}`;
  }
}

/** Where a person looks when an agent is silent. */
function configureHint(agent: HealthSource['agent']): string {
  switch (agent) {
    case 'argocd':
      return 'check the Argo CD notifications subscription of that app (docs/health.md)';
    case 'flux':
      return 'check the Flux Alert and its generic-hmac Provider for that object (docs/health.md)';
    default:
      return 'check that the agent posts that commit status on the commits it syncs (docs/health.md)';
  }
}

/** `2h 10m`, `45s`, `3d 4h`: the two largest units. */
export function formatSpan(ms: number): string {
  const seconds = Math.max(0, Math.floor(ms / 1000));
  const units: Array<[string, number]> = [
    ['d', Math.floor(seconds / 86_400)],
    ['h', Math.floor((seconds % 86_400) / 3600)],
    ['m', Math.floor((seconds % 3600) / 60)],
    ['s', seconds % 60],
  ];
  const first = units.findIndex(([, value]) => value > 0);
  if (first < 0) return '0s';
  return units
    .slice(first, first + 2)
    .filter(([, value]) => value > 0)
    .map(([unit, value]) => `${value}${unit}`)
    .join(' ');
}

const short = (sha: string): string => sha.slice(0, 7);

/** A commit the agent must report: where the versions landed, or where the newest carried configuration change did. */
interface Landing {
  /** `merge`: where the versions landed; `config`: where the newest carried configuration change merged. */
  kind: 'merge' | 'config';
  text: string;
  at: number;
  contained: boolean;
}

/** The commits `app`'s report must contain: the versions' merge and the newest carried configuration change. */
function landings(app: HealthGateApp): Landing[] {
  return [
    ...(app.merge
      ? [
          {
            kind: 'merge' as const,
            text: `merge ${short(app.merge.sha)}`,
            at: Date.parse(app.merge.at),
            contained: app.containsMerge === true,
          },
        ]
      : []),
    ...(app.config
      ? [
          {
            kind: 'config' as const,
            text: `configuration change ${short(app.config.sha)}${app.config.pull !== undefined ? ` (#${app.config.pull})` : ''}`,
            at: Date.parse(app.config.at),
            contained: app.containsConfig === true,
          },
        ]
      : []),
  ];
}

/** The later landing of `list` (the first on a tie: the versions' merge). */
function latest(list: readonly Landing[]): Landing | undefined {
  let found: Landing | undefined;
  for (const landing of list) if (!found || landing.at > found.at) found = landing;
  return found;
}

/**
 * Healthy since before the merge (or the carried configuration change) means healthy at an older
 * revision that carried on: soak counts from the later of the two.
 */
function soakStart(healthySince: string, app: HealthGateApp): string {
  const from = Math.max(0, ...landings(app).map((landing) => landing.at));
  return new Date(Math.max(Date.parse(healthySince), from)).toISOString();
}

/** The verdict for one app. */
export function judgeApp(input: HealthGateInput, app: HealthGateApp): AppVerdict {
  const { source, now } = input;
  const expected = describeSource(app.expected);
  const all = landings(app);
  // The timeout counts from the later landing: a configuration change merged after the versions gives the agent its own time.
  const last = latest(all);
  const deadline = last ? last.at + input.timeoutMs : undefined;
  const health = app.health;
  const reportedBy = health ? describeSource(health.source) : expected;
  const words = health?.message ? `: ${health.message}` : '';
  // A report about a revision older than the merge, or than the newest carried configuration
  // change, never counts (that commit is not running yet).
  const missing = all.filter((landing) => !landing.contained);
  const current = health !== undefined && missing.length === 0;
  if (!current) {
    // What the agent is waited for: the later commit it has not reported yet (the later of all with no report).
    const awaited = latest(health ? missing : all);
    // A configuration change rarely changes the versions: the agent's own commit is the one to compare with it.
    const named = health && awaited?.kind === 'config' ? (health.reported ?? health.revision) : health?.revision;
    const about = health
      ? `the last report (${short(named ?? '')}, ${health.sync}/${health.health}) is about a revision older than ${awaited?.text ?? 'merge '}`
      : `no report from ${expected} yet`;
    if (deadline !== undefined && now >= deadline)
      return {
        state: 'failed',
        degraded: false,
        line: `no report from ${expected} on ${app.running} within ${input.timeoutText} of ${awaited?.text ?? 'merge '} (${about}); ${configureHint(app.expected.agent)}`,
      };
    return {
      state: 'pending',
      recheckAt: deadline ?? now + input.timeoutMs,
      line: `${source} runs ${app.running}: waiting for ${expected} to report ${awaited ? awaited.text : 'it'} synced and healthy (${about})`,
    };
  }
  // With a configuration change carried, the commit the agent named says it runs that change too.
  const where = `${reportedBy}, synced to ${short(app.config ? (health.reported ?? health.revision) : health.revision)}`;
  if (health.sync === 'failed')
    return {
      state: 'failed',
      degraded: true,
      line: `${source} failed to sync ${app.running} (${where}${words}); promotion halts until it syncs and reports healthy`,
    };
  if (health.health === 'degraded') {
    const since = Date.parse(health.degradedSince ?? health.reportedAt);
    if (now - since >= input.tolerateMs)
      return {
        state: 'failed',
        degraded: true,
        line: `${source} runs ${app.running} Degraded for ${formatSpan(now - since)}, longer than the ${input.tolerateText} tolerated (${where}${words}); promotion halts until it reports healthy`,
      };
    // A spell shorter than `tolerate` keeps healthy-since (the soak goes on), but nothing merges during it.
    const kept = health.healthySince ? soakStart(health.healthySince, app) : undefined;
    return {
      state: 'pending',
      recheckAt: since + input.tolerateMs,
      line: `${source} runs ${app.running} Degraded for ${formatSpan(now - since)}, within the ${input.tolerateText} tolerated (${where})`,
      ...(kept ? { healthySince: kept } : {}),
    };
  }
  if (health.sync === 'synced' && health.health === 'healthy' && health.healthySince) {
    const from = soakStart(health.healthySince, app);
    return {
      state: 'passed',
      healthySince: from,
      line: `${source} runs ${app.running}, healthy for ${formatSpan(now - Date.parse(from))} (${where})`,
    };
  }
  const state = `${health.sync}/${health.health}`;
  if (deadline !== undefined && now >= deadline)
    return {
      state: 'failed',
      degraded: false,
      line: `${app.running} is not synced and healthy in ${source} within ${input.timeoutText} of ${last?.text ?? 'merge '}: ${reportedBy} last said ${state}${words}`,
    };
  return {
    state: 'pending',
    recheckAt: deadline ?? now + input.timeoutMs,
    line: `${source} runs ${app.running}, ${state} (${where}); waiting for synced and healthy`,
  };
}

/** The `health` gate of a promotion out of an environment whose health is configured. */
export function planHealthGate(input: HealthGateInput): HealthGateDecision {
  const verdicts = input.apps.map((app) => {
    const verdict = judgeApp(input, app);
    return verdict.state === 'failed' && app.note ? { ...verdict, line: `${verdict.line}; ${app.note}` } : verdict;
  });
  const lines = verdicts.map((verdict) => verdict.line);
  const failed = verdicts.filter((verdict) => verdict.state === 'failed');
  const pending = verdicts.filter((verdict) => verdict.state === 'pending');
  const healthySince = verdicts.map((verdict) => (verdict.state === 'failed' ? undefined : verdict.healthySince));
  const recheck = pending.map((verdict) => verdict.recheckAt);
  const recheckAt = recheck.length > 0 ? Math.min(...recheck) : undefined;
  if (input.apps.length === 0)
    return {
      gate: { name: 'health', state: 'passed', detail: `nothing of ${input.source} to wait for` },
      healthySince,
      lines,
    };
  const state = failed.length > 0 ? 'failed' : pending.length > 0 ? 'pending' : 'passed';
  const shown = state === 'failed' ? failed : state === 'pending' ? pending : verdicts;
  return {
    gate: { name: 'health', state, detail: shown.map((verdict) => verdict.line).join('; ') },
    healthySince,
    ...(recheckAt !== undefined && state === 'pending' ? { recheckAt } : {}),
    lines,
  };
}

/** `12:03` (UTC) of an ISO time, for sentences a reviewer reads next to the agent's own times. */
function clock(iso: string): string {
  return new Date(iso).toISOString().slice(11, 16);
}

/**
 * Why Escalator rolls an environment back on its own (`rollback: auto`), for the pull request:
 * "hello 1.4.2 went Degraded in staging at 12:03 for 5m (Argo CD app hello-staging: …); rolling
 * back to 1.4.1, healthy there until 12:01".
 */
export function rollbackReason(input: {
  environment: string;
  running: string;
  health: AppHealth;
  target: { tags: string[]; until?: string | undefined };
  now: number;
}): string {
  const { health } = input;
  const since = health.degradedSince ?? health.reportedAt;
  const what = health.sync === 'failed' ? 'failed to sync' : 'went Degraded';
  const words = health.message ? `: ${health.message}` : '';
  const until = input.target.until ? `, healthy there until ${clock(input.target.until)}` : '';
  return `${input.running} ${what} in ${input.environment} at ${clock(since)} for ${formatSpan(input.now - Date.parse(since))} (${describeSource(health.source)}${words}); rolling back to ${input.target.tags.join(', ')}${until}`;
}

/** Whether an app's recorded health is bad enough to act on: a failed sync, or degraded for `tolerate` or longer. */
export function sustainedBad(health: AppHealth, tolerateMs: number, now: number): boolean {
  if (health.sync === 'failed') return true;
  if (health.health !== 'degraded') return false;
  return now - Date.parse(health.degradedSince ?? health.reportedAt) >= tolerateMs;
}

/**
 * The state of a Deployment whose commit the agent's revision contains: success when synced and
 * healthy, failure on a failed sync or a degraded spell past `tolerate`, in progress otherwise.
 */
export function deploymentState(
  health: AppHealth,
  tolerateMs: number,
  now: number,
): { state: 'in_progress' | 'success' | 'failure'; description: string } {
  const where = `${describeSource(health.source)} at ${short(health.revision)}`;
  if (health.sync === 'synced' && health.health === 'healthy')
    return { state: 'success', description: `synced and healthy (${where})` };
  if (sustainedBad(health, tolerateMs, now))
    return {
      state: 'failure',
      description: `${health.sync === 'failed' ? 'sync failed' : 'degraded'} (${where})`,
    };
  return { state: 'in_progress', description: `${health.sync}/${health.health} (${where})` };
}
