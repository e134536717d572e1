/**
 * `npx tsx bench/fuzz-report.ts [--http] [--content]`: the hostile-input figures of issue 9.
 *
 * 1. HTTP: Escalator's web role (startEscalator, role web, real Redis, random prefix) takes the
 *    generated requests of test/fuzz/support/http-fuzz.ts for every endpoint, then every field of
 *    every real payload replaced by deep nesting or a huge string; prints the cases tried per
 *    endpoint and outcome (status code), and every broken invariant
 * 2. HTTP with Redis down: the same generators against a web role whose Redis is a dead port
 * 3. content: each hostile file of test/fuzz/support/hostile-content.ts through editImages,
 *    listImages and parseRepoConfig in a child process (heap limit 2 GB; one process serves case
 *    after case, a fresh one after a kill or a crash), each call bounded; prints the outcome and
 *    time of each call
 * 4. exits non-zero when an HTTP invariant broke
 *
 * Environment: REDIS_URL (default redis://127.0.0.1:6379), FUZZ_SCALE (multiplies the HTTP
 * runs, default 1), HOSTILE_BOUND_MS (per planner call, default 10000). Keys live under a
 * random prefix and are removed at the end.
 */
import {
  defaultRuns,
  describeCase,
  endpointCases,
  fuzzEndpoint,
  RedisCounts,
  runCase,
  sweepCases,
  Tally,
} from '../test/fuzz/support/http-fuzz.js';
import {
  closeHostileChild,
  HEAP_LIMIT_MB,
  hostileCases,
  runHostileCase,
  type CallResult,
} from '../test/fuzz/support/hostile-content.js';
import { startFuzzStack } from '../test/fuzz/support/stack.js';

const scale = Number(process.env.FUZZ_SCALE ?? 1);
const boundMs = Number(process.env.HOSTILE_BOUND_MS ?? 10_000);
const flags = new Set(process.argv.slice(2));
const all = !flags.has('--http') && !flags.has('--content');

async function http(): Promise<number> {
  const tally = new Tally();
  const violations: string[] = [];
  const started = performance.now();
  const stack = await startFuzzStack();
  try {
    const cases = endpointCases(stack.secrets);
    for (const [endpoint, runs] of Object.entries(defaultRuns)) {
      try {
        await fuzzEndpoint(stack, cases[endpoint]!, Math.round(runs * scale), tally);
      } catch (error) {
        violations.push(
          `${endpoint}: ${(error as Error).message.split('\n').find((line) => line.includes('Caused by') || line.startsWith(endpoint)) ?? (error as Error).message.slice(0, 500)}`,
        );
      }
    }
    const counts = new RedisCounts(stack);
    await counts.reset();
    for (const fuzzCase of sweepCases(stack.secrets)) {
      const problems = await runCase(stack, fuzzCase, tally, 'up', counts);
      if (problems.length > 0) violations.push(describeCase(fuzzCase, problems));
    }
  } finally {
    await stack.close();
  }
  const down = await startFuzzStack({ redisUrl: 'redis://127.0.0.1:1' });
  try {
    const cases = endpointCases(down.secrets);
    for (const endpoint of [
      'github-webhook',
      'registry/harbor',
      'registry/dockerhub',
      'registry/gar',
      'ci',
      'healthz',
      'unknown',
      'malformed-http',
    ]) {
      try {
        await fuzzEndpoint(down, cases[endpoint]!, Math.round(60 * scale), tally, { mode: 'redis-down' });
      } catch (error) {
        violations.push(`${endpoint} (redis down): ${(error as Error).message.slice(0, 500)}`);
      }
    }
  } finally {
    await down.close();
  }
  console.log(
    `HTTP fuzz: ${tally.total()} cases in ${((performance.now() - started) / 1000).toFixed(1)} s (FUZZ_SCALE=${scale})\n`,
  );
  console.log(tally.table());
  console.log(`\nbroken invariants: ${violations.length}`);
  for (const violation of violations) console.log(`  ${violation}`);
  return violations.length;
}

async function content(): Promise<void> {
  console.log(
    `\nHostile repository content: each call in a child process, ${HEAP_LIMIT_MB} MB heap, killed after ${boundMs} ms\n`,
  );
  console.log(
    `${'case'.padEnd(20)} ${'MB'.padStart(5)} ${'call'.padEnd(25)} ${'outcome'.padEnd(9)} ${'ms'.padStart(7)}  answer`,
  );
  const results: CallResult[] = [];
  try {
    for (const hostile of hostileCases) {
      for (const result of await runHostileCase(hostile.name, boundMs)) {
        results.push(result);
        console.log(
          `${result.case.padEnd(20)} ${(result.bytes / 1024 / 1024).toFixed(1).padStart(5)} ${result.call.padEnd(25)} ${result.outcome.padEnd(9)} ${String(result.ms).padStart(7)}  ${result.detail.slice(0, 110)}`,
        );
      }
    }
  } finally {
    await closeHostileChild();
  }
  const by = (outcome: CallResult['outcome']) => results.filter((result) => result.outcome === outcome).length;
  console.log(
    `\ncalls: ${results.length}; answered ${by('answered')}, threw ${by('threw')}, crashed ${by('crashed')}, over ${boundMs} ms ${by('timeout')}`,
  );
}

const broken = all || flags.has('--http') ? await http() : 0;
if (all || flags.has('--content')) await content();
process.exitCode = broken > 0 ? 1 : 0;
