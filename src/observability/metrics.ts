import { Octokit } from '@octokit/rest';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics, one registry per process (`/metrics` on the web server of every role).
 * Label values are bounded: sources, outcomes, queue names, templated GitHub routes, target names.
 * Request paths never become labels as they are: each owner, repository, pull request number or
 * path token would be a series of its own (and would publish it); `httpRouteLabel` and
 * `githubRouteLabel` map them onto a fixed set of templates.
 */
export const metricsRegistry = new Registry();
collectDefaultMetrics({ register: metricsRegistry, prefix: 'escalator_process_' });

export const intakeRequests = new Counter({
  name: 'escalator_intake_requests_total',
  help: 'Intake requests by source (registry, ci, github) and outcome (accepted, ignored, invalid, unauthorized, …).',
  labelNames: ['source', 'outcome'] as const,
  registers: [metricsRegistry],
});

export const agentReports = new Counter({
  name: 'escalator_agent_reports_total',
  help: 'Agent reports (Argo CD, Flux, GitHub statuses) by agent and outcome (accepted, duplicate, unknown: no repository listens to the object, ignored, invalid, unauthorized, …).',
  labelNames: ['agent', 'outcome'] as const,
  registers: [metricsRegistry],
});

export const jobDuration = new Histogram({
  name: 'escalator_job_duration_seconds',
  help: 'Job processing time by queue and outcome (completed, failed, delayed).',
  labelNames: ['queue', 'outcome'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [metricsRegistry],
});

export const jobsFailed = new Counter({
  name: 'escalator_jobs_failed_total',
  help: 'Job attempts that failed, by queue and whether they will be retried.',
  labelNames: ['queue', 'final'] as const,
  registers: [metricsRegistry],
});

/**
 * Well-formed `/escalator` commands from people without write access, by what became of the reply:
 * `replied`, `repeated` (told in this repository already today), `capped` (the installation's
 * replies of the hour are spent; docs/controls.md).
 */
export const commandRefusals = new Counter({
  name: 'escalator_command_refusals_total',
  help: 'Commands refused for want of write access, by outcome: replied, repeated (told in this repository already today), capped (the hourly cap of replies per installation was reached; no reply).',
  labelNames: ['outcome'] as const,
  registers: [metricsRegistry],
});

export const jobsYielded = new Counter({
  name: 'escalator_jobs_yielded_total',
  help: 'Jobs that gave their worker to another installation waiting on the same queue (no attempt used).',
  labelNames: ['queue'] as const,
  registers: [metricsRegistry],
});

export const webhookUnverifiedBytes = new Gauge({
  name: 'escalator_webhook_unverified_bytes',
  help: 'Bytes of GitHub webhook bodies held right now whose signatures are not checked yet (limit: ESCALATOR_WEBHOOK_BUFFER_BYTES).',
  registers: [metricsRegistry],
});

export const queueDepth = new Gauge({
  name: 'escalator_queue_jobs',
  help: 'Jobs per queue and state (waiting, active, delayed, failed), read at scrape time.',
  labelNames: ['queue', 'state'] as const,
  registers: [metricsRegistry],
});

export const httpRequests = new Counter({
  name: 'escalator_http_requests_total',
  help: 'Requests to Escalator\'s HTTP server by route template, method and status ("aborted" when the client left before the answer).',
  labelNames: ['route', 'method', 'status'] as const,
  registers: [metricsRegistry],
});

const methods = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS']);

/** An HTTP method as a label: the standard ones, else `other` (any token is a valid method). */
export function httpMethodLabel(method: string | undefined): string {
  return method && methods.has(method) ? method : 'other';
}

const fixedRoutes = new Set(['/healthz', '/readyz', '/metrics', '/api/github/webhooks', '/api/v1/images']);

/**
 * The route template of a request to Escalator's own server: the fixed routes as they are,
 * `/registry/:source` (the source is counted by escalator_intake_requests_total, the path token
 * never), `/admin/*` (queue dashboard, relay log), and `other` for everything else.
 */
export function httpRouteLabel(target: string | undefined): string {
  const [path = ''] = (target ?? '').split(/[?#]/, 1);
  if (fixedRoutes.has(path)) return path;
  if (/^\/registry(?:\/|$)/.test(path)) return '/registry/:source';
  if (/^\/admin(?:\/|$)/.test(path)) return '/admin/*';
  if (/^\/agents(?:\/|$)/.test(path)) return '/agents/:agent';
  return 'other';
}

interface RouteTemplate {
  template: string;
  pattern: RegExp;
  /** Literal segments: the most specific template wins when several match. */
  literals: number;
}

let githubTemplates: Map<string, RouteTemplate[]> | undefined;

/** GitHub's REST routes (from Octokit's endpoint table), by method and segment count. */
function templatesFor(method: string, segments: number): RouteTemplate[] {
  if (!githubTemplates) {
    githubTemplates = new Map();
    const rest = new Octokit().rest as unknown as Record<
      string,
      Record<string, { endpoint?: { DEFAULTS?: { method: string; url: string } } }>
    >;
    const seen = new Set<string>();
    for (const group of Object.values(rest)) {
      for (const fn of Object.values(group)) {
        const defaults = fn.endpoint?.DEFAULTS;
        if (!defaults || seen.has(`${defaults.method} ${defaults.url}`)) continue;
        seen.add(`${defaults.method} ${defaults.url}`);
        const parts = defaults.url.split('/').slice(1);
        const source = parts
          .map((part) => (/^\{[^}]+\}$/.test(part) ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')))
          .join('/');
        const key = `${defaults.method} ${parts.length}`;
        const list = githubTemplates.get(key) ?? [];
        list.push({
          template: defaults.url,
          pattern: new RegExp(`^/${source}$`),
          literals: parts.filter((part) => !part.startsWith('{')).length,
        });
        githubTemplates.set(key, list);
      }
    }
  }
  return githubTemplates.get(`${method} ${segments}`) ?? [];
}

/**
 * The route template of a request to GitHub, e.g. `GET /repos/{owner}/{repo}/pulls/{pull_number}`.
 * Octokit's endpoint methods pass their template; `paginate` and `octokit.request` with a built
 * path pass the full URL (owner, repository, number, query), which is matched against GitHub's
 * REST routes (Octokit's endpoint table) and labelled `other` when none fits. The base URL (a
 * GHES `/api/v3`), the query string and a `/repositories/<id>` page link are taken off first.
 */
export function githubRouteLabel(method: string, url: string): string {
  const verb = httpMethodLabel(method.toUpperCase());
  let path = url;
  if (!path.startsWith('/')) {
    try {
      path = new URL(path).pathname;
    } catch {
      return `${verb} other`;
    }
  }
  [path = ''] = path.split(/[?#]/, 1);
  path = path.replace(/^\/api\/v3(?=\/)/, '');
  if (path.includes('{')) {
    // A template from the code: bounded by the code; still never one holding a value.
    return /^(?:\/(?:[a-z0-9_-]+|\{[a-z_]+\}))+$/.test(path) ? `${verb} ${path}` : `${verb} other`;
  }
  path = path.replace(/^\/repositories\/\d+(?=\/|$)/, '/repos/{owner}/{repo}');
  const segments = path.split('/').length - 1;
  let best: RouteTemplate | undefined;
  for (const candidate of templatesFor(verb, segments)) {
    const literal = path.replace(/\{owner\}\/\{repo\}/, 'o/r');
    if (candidate.pattern.test(literal) && (!best || candidate.literals > best.literals)) best = candidate;
  }
  return best ? `${verb} ${best.template}` : `${verb} other`;
}

export const githubRequests = new Counter({
  name: 'escalator_github_requests_total',
  help: 'Requests to the GitHub API by route template and status.',
  labelNames: ['route', 'status'] as const,
  registers: [metricsRegistry],
});

/** Requests to container registries (release notes, verification); no host label: hosts come from repository files. */
export const registryRequests = new Counter({
  name: 'escalator_registry_requests_total',
  help: 'Requests to container registries by kind (manifest, blob, token) and status (0: no answer).',
  labelNames: ['kind', 'status'] as const,
  registers: [metricsRegistry],
});

export const githubRateLimitRemaining = new Gauge({
  name: 'escalator_github_rate_limit_remaining',
  help: 'x-ratelimit-remaining of the last GitHub response.',
  registers: [metricsRegistry],
});

export const renderDuration = new Histogram({
  name: 'escalator_render_duration_seconds',
  help: 'Time to render one target (kustomize build, helm template, plain YAML).',
  labelNames: ['tool', 'outcome'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [metricsRegistry],
});

/** Per-target relay metrics, registered once per registry. */
export interface RelayMetrics {
  deliveries: Counter<'target' | 'outcome'>;
  latency: Histogram<'target'>;
}

export function relayMetrics(target: Registry = metricsRegistry): RelayMetrics {
  const deliveries =
    (target.getSingleMetric('escalator_relay_deliveries_total') as Counter<'target' | 'outcome'> | undefined) ??
    new Counter({
      name: 'escalator_relay_deliveries_total',
      help: 'Relay attempts per target and outcome (delivered, retry, rate-limited, rejected, skipped).',
      labelNames: ['target', 'outcome'],
      registers: [target],
    });
  const latency =
    (target.getSingleMetric('escalator_relay_latency_seconds') as Histogram<'target'> | undefined) ??
    new Histogram({
      name: 'escalator_relay_latency_seconds',
      help: 'Time for an agent to answer a relayed webhook.',
      labelNames: ['target'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [target],
    });
  return { deliveries, latency };
}
