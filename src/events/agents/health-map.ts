import type { AgentReport, Poster } from './report.js';

/** An (environment, app) of a repository that an agent report is about. */
export interface HealthTarget {
  environment: string;
  app: string;
}

/** A GitHub-posted source: the context pattern and who may post it (`environments[].health.statuses[]`). */
export interface StatusListen {
  context: string;
  app?: string | number | undefined;
  user?: string | undefined;
}

/** The agent objects an environment listens to (`environments[].health` of the repository config). */
export interface HealthListen {
  argocd?: string | undefined;
  flux?: string | undefined;
  statuses: readonly StatusListen[];
}

/** What the mapping reads of a repository's index: its environments' health settings, and the apps each environment's files bind. */
export interface HealthMapIndex {
  config: { environments: ReadonlyArray<{ name: string; health?: HealthListen | undefined }> } | null;
  files: ReadonlyArray<{ environment: string; app: string }>;
}

/** The longest object (namespace and name, or a status context) matched against patterns. */
const MAX_SUBJECT_CHARS = 600;

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** The pattern as a whole-string regular expression: `*` is any run of characters, `{app}` is `app`. */
function compile(pattern: string, app: string): RegExp {
  const source = pattern
    .split(/(\{app\}|\*)/)
    .map((part) => (part === '*' ? '.*' : part === '{app}' ? escapeRegExp(app) : escapeRegExp(part)))
    .join('');
  return new RegExp(`^${source}$`);
}

/**
 * Whether `poster` is the one a status source names. An App is named by its id or its slug (both
 * case-insensitive for the slug); a commit status names only the bot account `<slug>[bot]`, so an
 * App bound by id matches its check runs and deployment statuses, and its commit statuses only
 * when the binding is its slug. A user is named by login (GitHub logins are case-insensitive).
 */
export function posterMatches(source: StatusListen, poster: Poster | undefined): boolean {
  if (!poster) return false;
  if (source.user !== undefined)
    return poster.kind === 'user' && poster.login.toLowerCase() === source.user.toLowerCase();
  if (source.app === undefined || poster.kind !== 'app') return false;
  if (typeof source.app === 'number') return poster.id === source.app;
  return poster.slug !== undefined && poster.slug.toLowerCase() === source.app.toLowerCase();
}

/**
 * The patterns of an environment's health setting that listen to this report. Argo CD's and
 * Flux's come through their authenticated routes; a GitHub-posted report is heard only by the
 * status sources whose bound poster posted it and, for a deployment status, whose Deployment
 * Escalator or that same poster created (anyone with write access can post a status, a check run
 * through a workflow, or a Deployment).
 */
function patternsFor(health: HealthListen, report: AgentReport): readonly string[] {
  if (report.agent === 'argocd') return health.argocd ? [health.argocd] : [];
  if (report.agent === 'flux') return health.flux ? [health.flux] : [];
  return health.statuses
    .filter(
      (source) =>
        posterMatches(source, report.poster) &&
        (!report.deployment || report.deployment.byEscalator || posterMatches(source, report.deployment.creator)),
    )
    .map((source) => source.context);
}

/**
 * What the object is called when matched against a pattern: `namespace/name` when the pattern
 * names a namespace (has a `/`) for Argo CD and Flux; the status context, check run name or
 * deployment environment as it is.
 */
function subjectFor(report: AgentReport, pattern: string): string {
  if (report.agent === 'status' || !pattern.includes('/')) return report.object.name;
  return `${report.object.namespace ?? ''}/${report.object.name}`;
}

/**
 * Which (environment, app) pairs of a repository an agent report is about. Per environment with
 * `health`: a pattern with `{app}` is tried with each app the environment's files bind; a pattern
 * without it names one object for the whole environment, so the report is about every app of it.
 * No pair: the repository does not listen to that object (the caller counts it as unknown).
 */
export function mapAgentReport(index: HealthMapIndex, report: AgentReport): HealthTarget[] {
  const targets: HealthTarget[] = [];
  // Kubernetes names and GitHub contexts are far shorter; a longer one is no object of any config
  // (and never meets a pattern's backtracking).
  if (report.object.name.length + (report.object.namespace?.length ?? 0) > MAX_SUBJECT_CHARS) return targets;
  for (const environment of index.config?.environments ?? []) {
    if (!environment.health) continue;
    const apps = [
      ...new Set(index.files.filter((file) => file.environment === environment.name).map((file) => file.app)),
    ].sort();
    const matched = new Set<string>();
    for (const pattern of patternsFor(environment.health, report)) {
      const subject = subjectFor(report, pattern);
      if (pattern.includes('{app}')) {
        for (const app of apps) if (compile(pattern, app).test(subject)) matched.add(app);
      } else if (compile(pattern, '').test(subject)) for (const app of apps) matched.add(app);
    }
    for (const app of [...matched].sort()) targets.push({ environment: environment.name, app });
  }
  return targets;
}

/**
 * The `owner/repo` of a GitHub repository URL as Argo CD spells `repoURL`
 * (`https://github.com/o/r(.git)`, `git@github.com:o/r.git`, `ssh://git@github.com/o/r`), or
 * undefined for another host's or a Helm repository's URL. `host` is GitHub's (Enterprise) host.
 */
export function githubRepoOf(url: string, host = 'github.com'): { owner: string; repo: string } | undefined {
  const match = /^(?:https?:\/\/|ssh:\/\/)?(?:[^@/]+@)?([^/:]+)(?::\d+)?[/:]([^/]+)\/([^/]+?)(?:\.git)?\/?$/i.exec(
    url.trim(),
  );
  if (!match || match[1]!.toLowerCase() !== host.toLowerCase()) return undefined;
  return { owner: match[2]!, repo: match[3]! };
}
