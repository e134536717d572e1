/**
 * One promotion dev → staging measured end to end, for bench/promote.ts (image versions) and
 * bench/config-promote-calls.ts (image versions beside configuration changes): what a person
 * merges, the time until the staging promotion PR is listable, and the GitHub calls from the merge
 * until Escalator is idle again, by the job that made them.
 */
import {
  byJob,
  envPatch,
  githubBusyMs,
  postImage,
  routeSummary,
  waitForPull,
  waitIdle,
  type BenchStack,
  type CallerJob,
  type GitHubCall,
} from './stack.js';
import { ms, summarize } from './stats.js';

export interface PromotionSample {
  /** Merge call returned → staging PR ready. */
  ms: number;
  /** How long the merge call itself took (the simulator's git merge). */
  mergeMs: number;
  githubMs: number;
  calls: GitHubCall[];
  byJob: Map<CallerJob, GitHubCall[]>;
}

interface Target {
  owner: string;
  repo: string;
  app: string;
}

/**
 * Merge `number` (the sandbox control API: a real git merge, then signed `push` and
 * `pull_request.closed` webhooks to Escalator) and measure until the PR on
 * `escalator/promote/staging/<app>` is listable with its two labels and `title`, then until
 * Escalator is idle.
 */
async function measureMerge(stack: BenchStack, target: Target, number: number, title: string) {
  const { owner, repo, app } = target;
  const staging = waitForPull(stack, {
    owner,
    repo,
    branch: `escalator/promote/staging/${app}`,
    ready: (p) => p.labels.length >= 2 && p.title === title,
  });
  const before = Date.now();
  await stack.client.mergePull(`${owner}/${repo}`, number);
  const merged = Date.now();
  const { at } = await staging;
  await waitIdle(stack);
  const calls = stack.calls.filter((call) => call.startedAt >= before);
  return {
    ms: at - merged,
    mergeMs: merged - before,
    githubMs: githubBusyMs(calls, merged, at),
    calls,
    byJob: byJob(calls),
  };
}

/**
 * An image promotion: `POST /api/v1/images` → wait for the dev bump PR and for Escalator to go
 * idle → merge it → the staging promotion PR `Promote <app> <tag> to staging`.
 */
export async function measureImagePromotion(
  stack: BenchStack,
  target: Target & { image: string; tag: string; digest: string },
): Promise<PromotionSample> {
  const { owner, repo, app } = target;
  const dev = waitForPull(stack, {
    owner,
    repo,
    branch: `escalator/dev/${app}`,
    ready: (pull) => pull.labels.length >= 2,
  });
  await postImage(stack, `${target.image}:${target.tag}@${target.digest}`);
  const { pull } = await dev;
  await waitIdle(stack);
  return measureMerge(stack, target, pull.number, `Promote ${app} ${target.tag} to staging`);
}

/**
 * A configuration promotion: a person's pull request setting LOG_LEVEL to `logLevel` in the app's
 * dev overlay (`gitopsFiles` with `envPatch`), opened, Escalator idle (its rendered diff), then
 * merged → the staging promotion PR `Promote <app> configuration to staging`.
 */
export async function measureConfigPromotion(
  stack: BenchStack,
  target: Target & { logLevel: string },
): Promise<PromotionSample> {
  const { owner, repo, app } = target;
  const full = `${owner}/${repo}`;
  const branch = `log-level-${app}-${target.logLevel}`;
  await stack.client.commit(full, {
    branch,
    from: 'main',
    files: { [`apps/${app}/overlays/dev/env.yaml`]: envPatch(app, target.logLevel) },
    message: `Log level ${target.logLevel} for ${app} in dev`,
  });
  const pull = await stack.client.openPull(full, { title: `Log level ${target.logLevel} for ${app}`, head: branch });
  await waitIdle(stack);
  return measureMerge(stack, target, pull.number, `Promote ${app} configuration to staging`);
}

export function timeLine(label: string, samples: number[]): string {
  const s = summarize(samples);
  return `${label.padEnd(44)} n=${String(s.n).padEnd(3)} p50 ${ms(s.p50).padStart(8)}   p90 ${ms(s.p90).padStart(8)}   p99 ${ms(s.p99).padStart(8)}   max ${ms(s.max).padStart(8)}`;
}

export function callLine(label: string, values: number[]): string {
  const s = summarize(values);
  const mean = values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
  return `${label.padEnd(44)} min ${Math.min(...values)}   p50 ${s.p50}   mean ${mean.toFixed(1)}   max ${s.max}`;
}

export const countCalls = (sample: PromotionSample, job: CallerJob): number => sample.byJob.get(job)?.length ?? 0;

/** The jobs a promotion runs after the merge, in the order they are printed; anything else is counted apart. */
export const promotionJobs: Array<[CallerJob, string]> = [
  ['index', 'index job (the push to the default branch)'],
  ['landing', 'landing job (the merged pull request)'],
  ['promote', 'promote job'],
  ['diff', 'rendered diff of the promotion PR'],
];

/** Calls of the promotion itself: every call after the merge but the promotion PR's rendered diff. */
export const promotionCalls = (sample: PromotionSample): number => sample.calls.length - countCalls(sample, 'diff');

/** GitHub calls per promotion by job, then the routes of one promotion. */
export function printPromotionCalls(samples: PromotionSample[], indent = '  '): void {
  for (const [job, label] of promotionJobs)
    console.log(
      `${indent}${callLine(
        label,
        samples.map((s) => countCalls(s, job)),
      )}`,
    );
  const named = new Set(promotionJobs.map(([job]) => job));
  console.log(
    `${indent}${callLine(
      'anything else',
      samples.map((s) => s.calls.filter((call) => !named.has(call.job)).length),
    )}`,
  );
  console.log(`${indent}${callLine('promotion total (all but the diff)', samples.map(promotionCalls))}`);
  console.log(
    `${indent}${callLine(
      'all calls after the merge',
      samples.map((s) => s.calls.length),
    )}`,
  );
  const one = samples[Math.min(1, samples.length - 1)];
  if (!one) return;
  console.log(`${indent}routes of one promotion (${ms(one.ms)}):`);
  for (const [job] of promotionJobs.filter(([job]) => job !== 'diff'))
    for (const call of one.byJob.get(job) ?? [])
      console.log(
        `${indent}  ${job.padEnd(8)} ${String(call.status)} ${call.route.padEnd(58)} ${ms(call.endedAt - call.startedAt).padStart(8)}`,
      );
  console.log(`${indent}  diff     ${routeSummary(one.byJob.get('diff') ?? []).join(', ')}`);
  const others = one.calls.filter((call) => !named.has(call.job));
  if (others.length > 0)
    console.log(`${indent}  other    ${others.map((call) => `${call.job}: ${call.route}`).join(', ')}`);
}
