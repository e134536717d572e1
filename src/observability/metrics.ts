import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/**
 * Prometheus metrics, one registry per process (`/metrics` on the web server of every role).
 * Label values are bounded: sources, outcomes, queue names, templated GitHub routes, target names.
 */
export const registry = new Registry();
collectDefaultMetrics({ register: registry, prefix: 'escalator_process_' });

export const intakeRequests = new Counter({
  name: 'escalator_intake_requests_total',
  help: 'Intake requests by source (registry, ci, github) and outcome (accepted, ignored, invalid, unauthorized, …).',
  labelNames: ['source', 'outcome'] as const,
  registers: [registry],
});

export const jobDuration = new Histogram({
  name: 'escalator_job_duration_seconds',
  help: 'Job processing time by queue and outcome (completed, failed, delayed).',
  labelNames: ['queue', 'outcome'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
});

export const jobsFailed = new Counter({
  name: 'escalator_jobs_failed_total',
  help: 'Job attempts that failed, by queue and whether they will be retried.',
  labelNames: ['queue', 'final'] as const,
  registers: [registry],
});

export const webhookUnverifiedBytes = new Gauge({
  name: 'escalator_webhook_unverified_bytes',
  help: 'Bytes of GitHub webhook bodies held right now whose signatures are not checked yet (limit: ESCALATOR_WEBHOOK_BUFFER_BYTES).',
  registers: [registry],
});

export const queueDepth = new Gauge({
  name: 'escalator_queue_jobs',
  help: 'Jobs per queue and state (waiting, active, delayed, failed), read at scrape time.',
  labelNames: ['queue', 'state'] as const,
  registers: [registry],
});

export const githubRequests = new Counter({
  name: 'escalator_github_requests_total',
  help: 'Requests to the GitHub API by route template and status.',
  labelNames: ['route', 'status'] as const,
  registers: [registry],
});

export const githubRateLimitRemaining = new Gauge({
  name: 'escalator_github_rate_limit_remaining',
  help: 'x-ratelimit-remaining of the last GitHub response.',
  registers: [registry],
});

export const renderDuration = new Histogram({
  name: 'escalator_render_duration_seconds',
  help: 'Time to render one target (kustomize build, helm template, plain YAML).',
  labelNames: ['tool', 'outcome'] as const,
  buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});
