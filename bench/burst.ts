/**
 * `npm run bench:burst` (`npx tsx bench/burst.ts`): a burst of registry events — 10,000 within one
 * minute across 200 images in 20 repositories — then how long until every repository holds the
 * newest tag of every image, how well the burst was coalesced, and what it cost in memory.
 *
 * 1. start the sandbox GitHub (this process), Escalator's web role and BURST_WORKERS worker
 *    processes (default 2) on the shared Redis under a random prefix; seed BURST_REPOS GitOps
 *    repositories (20) × BURST_APPS apps (10), each app its own image in `apps/<app>/overlays/dev`
 *    (from the registry, semver policy, no auto-merge), and wait until all are indexed
 * 2. send BURST_EVENTS registry events (10,000) evenly over BURST_SECONDS (60), open loop: event i
 *    leaves at i × BURST_SECONDS / BURST_EVENTS whatever the answers; each picks a random image
 *    (seeded) and carries its next tag `1.n.0`; half through `POST /registry/distribution`, half
 *    through the CI API `POST /api/v1/images`; no retries, every non-202 is counted
 * 3. wait until every image's bump PR title names its newest accepted tag (seen in the simulator,
 *    no polling), then until every queue is empty (the chaos run's drain); give up after
 *    BURST_DRAIN_SECONDS (900) and say what is missing
 * 4. read every dev overlay through the REST API (the open bump PR's head) and compare it byte for
 *    byte with the overlay at the newest accepted tag; count PRs and commits per repository
 * 5. print intake p50/p99 and errors, drain time, coalescing (events per commit), GitHub calls,
 *    memory of web and workers sampled every MEM_EVERY_SECONDS (5), peaks, and the load average
 * Figures only (no timing is asserted). Exit code 1 when an accepted event's tag is missing from
 * its repository or the run did not drain in time. Keys under the prefix are deleted at the end.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { seededRandom } from './chaos/driver.js';
import { drain } from './chaos/drain.js';
import { overlayPath, overlayText, tagOf, targetsOf } from './load/fixture.js';
import { MemorySampler } from './load/memory.js';
import { SenderProcess, type ScheduledEvent } from './load/sender.js';
import { startLoadStack } from './load/stack.js';
import { banner, loadavg, ms, sleep, summarize } from './support/stats.js';

const EVENTS = Number(process.env.BURST_EVENTS ?? 10_000);
const SECONDS = Number(process.env.BURST_SECONDS ?? 60);
const REPOS = Number(process.env.BURST_REPOS ?? 20);
const APPS = Number(process.env.BURST_APPS ?? 10);
const WORKERS = Number(process.env.BURST_WORKERS ?? 2);
const DRAIN_SECONDS = Number(process.env.BURST_DRAIN_SECONDS ?? 900);
const MEM_EVERY_SECONDS = Number(process.env.MEM_EVERY_SECONDS ?? 5);
const SEED = Number(process.env.BURST_SEED ?? 9);

const startedAt = Date.now();
const phase = (text: string) =>
  console.log(`  [+${((Date.now() - startedAt) / 1000).toFixed(1).padStart(6)} s] ${text}   load ${loadavg()}`);
const startLoad = loadavg();
banner(
  `bench/burst.ts — ${EVENTS} registry events in ${SECONDS} s across ${REPOS * APPS} images in ${REPOS} repositories`,
);
console.log(`  ${WORKERS} worker processes, 1 web process; ESCALATOR_DEBOUNCE_MS default (1.5 s); seed ${SEED}`);

const stack = await startLoadStack({
  name: 'burst',
  repos: REPOS,
  apps: APPS,
  environments: ['dev'],
  workers: WORKERS,
  progress: phase,
});
const LAG_RESOLUTION_MS = 10;
const lag = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
const memory = new MemorySampler(() => stack.processes(), MEM_EVERY_SECONDS * 1000, startedAt);
memory.start();
let exitCode = 0;
let senderProcess: SenderProcess | undefined;
try {
  const { fixture, observer } = stack;
  const targets = targetsOf(fixture);
  const random = seededRandom(SEED);
  const sentVersion = new Map<string, number>();
  const callsBefore = observer.calls;
  const writesBefore = new Map([...observer.writes].map(([repo, w]) => [repo, { ...w }]));

  // 2. The burst, open loop, from a process of its own.
  const everyMs = (SECONDS * 1000) / EVENTS;
  const schedule: ScheduledEvent[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const target = targets[Math.floor(random() * targets.length)]!;
    const version = (sentVersion.get(target.image) ?? 0) + 1;
    sentVersion.set(target.image, version);
    schedule.push({ offsetMs: i * everyMs, image: target.image, version, source: i % 2 === 0 ? 'distribution' : 'ci' });
  }
  memory.phase = 'burst';
  lag.enable();
  phase(`sending ${EVENTS} events`);
  const sending = new SenderProcess(stack.webUrl, stack.tokens, schedule);
  senderProcess = sending;
  const result = await sending.result;
  const burstStart = result.startedAt;
  const sentAllAt = result.lastSentAt;
  const answeredAllAt = result.lastAnsweredAt;
  const acceptedVersion = new Map<string, number>();
  for (const event of result.accepted)
    acceptedVersion.set(event.image, Math.max(acceptedVersion.get(event.image) ?? 0, event.version));
  const failed = Object.values(result.failures).reduce((sum, n) => sum + n, 0);
  phase(
    `sent ${result.sent} in ${((sentAllAt - burstStart) / 1000).toFixed(1)} s, all answered after ${((answeredAllAt - burstStart) / 1000).toFixed(1)} s: ${result.accepted.length} accepted, ${failed} not`,
  );

  // 3. Until every image's PR names its newest accepted tag, then until the queues are empty.
  memory.phase = 'drain';
  const deadline = burstStart + DRAIN_SECONDS * 1000;
  const behind = () =>
    targets.filter(
      (t) => (acceptedVersion.get(t.image) ?? 0) > observer.highestShown(t.repo, `escalator/dev/${t.app}`),
    );
  let lastReport = Date.now();
  while (behind().length > 0 && Date.now() < deadline) {
    await sleep(250);
    if (Date.now() - lastReport >= 30_000) {
      lastReport = Date.now();
      phase(`${targets.length - behind().length} of ${targets.length} images at their newest tag in their PR`);
    }
  }
  const missing = behind();
  const outcomeAt = Date.now();
  phase(
    missing.length === 0
      ? 'every image at its newest tag in its PR; draining the queues'
      : `GAVE UP: ${missing.length} images not at their newest tag after ${DRAIN_SECONDS} s`,
  );
  const drained = await drain({
    redis: stack.probe,
    prefix: stack.prefix,
    webhooks: stack.webhooks,
    idle: () => stack.sim.context.webhooks.idle(),
    recoverEveryMs: stack.recoverEveryMs,
    timeoutMs: Math.max(10_000, deadline - Date.now()),
    origin: burstStart,
  });
  const drainedAt = Date.now();
  lag.disable();
  memory.phase = 'after';
  await memory.stop();
  phase(`drained: ${drained.drained} (${(drained.tookMs / 1000).toFixed(1)} s)`);
  const calls = observer.calls - callsBefore;

  // 4. Read what GitHub holds; count PRs and commits.
  const wrong: string[] = [];
  const perRepo: Array<{ repo: string; pulls: number; open: number; commits: number; events: number }> = [];
  const acceptedPerImage = new Map<string, number>();
  for (const event of result.accepted) acceptedPerImage.set(event.image, (acceptedPerImage.get(event.image) ?? 0) + 1);
  for (const repo of fixture.repos) {
    const pulls = await stack.user.paginate(stack.user.rest.pulls.list, {
      owner: fixture.owner,
      repo,
      state: 'all',
      per_page: 100,
    });
    let commits = 0;
    for (const pull of pulls)
      commits += (
        await stack.user.paginate(stack.user.rest.pulls.listCommits, {
          owner: fixture.owner,
          repo,
          pull_number: pull.number,
          per_page: 100,
        })
      ).length;
    let events = 0;
    for (const app of fixture.apps) {
      const target = targets.find((t) => t.repo === repo && t.app === app)!;
      events += acceptedPerImage.get(target.image) ?? 0;
      const version = acceptedVersion.get(target.image) ?? 0;
      const open = pulls.find((pull) => pull.state === 'open' && pull.head.ref === `escalator/dev/${app}`);
      const ref = open?.head.sha ?? 'main';
      let text: string | null = null;
      try {
        const { data } = await stack.user.rest.repos.getContent({
          owner: fixture.owner,
          repo,
          path: overlayPath(app, 'dev'),
          ref,
        });
        if (!Array.isArray(data) && data.type === 'file') text = Buffer.from(data.content, 'base64').toString('utf8');
      } catch (error) {
        if ((error as { status?: number }).status !== 404) throw error;
      }
      if (text !== overlayText(target.image, tagOf(version)))
        wrong.push(
          `${repo}/${app}: dev overlay on ${open ? `PR #${open.number}` : 'main'} is not at ${tagOf(version)}${text === null ? ' (missing)' : `: ${/newTag: (\S+)/.exec(text)?.[1] ?? '?'}`}`,
        );
    }
    perRepo.push({ repo, pulls: pulls.length, open: pulls.filter((p) => p.state === 'open').length, commits, events });
  }

  // 5. Report.
  const all = [...result.latencies.ci, ...result.latencies.distribution];
  const intake = summarize(all);
  console.log('');
  console.log('intake (timed in the sender process, which does nothing else)');
  console.log(
    `  events sent ${result.sent} in ${((sentAllAt - burstStart) / 1000).toFixed(1)} s (${(result.sent / ((sentAllAt - burstStart) / 1000)).toFixed(0)}/s offered); accepted (202) ${result.accepted.length}; not accepted ${failed}${failed > 0 ? ` ${JSON.stringify(result.failures)}` : ''}`,
  );
  console.log(
    `  answer time p50 ${ms(intake.p50)}   p90 ${ms(intake.p90)}   p99 ${ms(intake.p99)}   max ${ms(intake.max)}   (n=${intake.n})`,
  );
  for (const [source, samples] of Object.entries(result.latencies)) {
    const s = summarize(samples);
    console.log(`    ${source.padEnd(13)} p50 ${ms(s.p50)}   p99 ${ms(s.p99)}   max ${ms(s.max)}   (n=${s.n})`);
  }
  // The histogram holds the timer's whole interval: the delay is what exceeds the resolution.
  const loop = {
    p50: lag.percentile(50) / 1e6 - LAG_RESOLUTION_MS,
    p99: lag.percentile(99) / 1e6 - LAG_RESOLUTION_MS,
    max: lag.max / 1e6 - LAG_RESOLUTION_MS,
  };
  console.log(
    `  sends left late against the schedule by p50 ${ms(result.lateness.p50)}, p99 ${ms(result.lateness.p99)}, max ${ms(result.lateness.max)}; sender event-loop delay p99 ${ms(result.lag.p99)}, max ${ms(result.lag.max)}`,
  );
  console.log(
    `  event-loop delay of the bench process (the simulator) during burst and drain: p50 ${ms(loop.p50)}   p99 ${ms(loop.p99)}   max ${ms(loop.max)}`,
  );
  console.log('drain');
  console.log(
    `  last event sent → every image's bump PR at its newest tag: ${missing.length === 0 ? ms(outcomeAt - sentAllAt) : `NOT REACHED (${missing.length} behind)`}`,
  );
  console.log(
    `  first event → every PR at its newest tag: ${missing.length === 0 ? ms(outcomeAt - burstStart) : 'n/a'};  first event → every queue empty: ${drained.drained ? ms(drainedAt - burstStart) : 'NOT DRAINED'}`,
  );
  for (const line of drained.timeline) console.log(`    ${line}`);
  console.log(
    `  failed jobs ${JSON.stringify(drained.failed)}${drained.failedReasons.length > 0 ? `: ${drained.failedReasons.slice(0, 4).join(' | ')}` : ''}`,
  );
  if (Object.keys(drained.undelivered).length > 0)
    console.log(`  webhooks never delivered: ${JSON.stringify(drained.undelivered)}`);
  console.log('coalescing, per repository (one living PR per app is the goal)');
  console.log(
    `  ${'repository'.padEnd(10)} ${'events'.padStart(7)} ${'PRs'.padStart(5)} ${'open'.padStart(5)} ${'commits'.padStart(8)} ${'bump commits'.padStart(13)} ${'PR writes'.padStart(10)} ${'events/commit'.padStart(14)}`,
  );
  let totalCommits = 0;
  for (const row of perRepo) {
    const before = writesBefore.get(row.repo) ?? { bumpCommits: 0, pullsOpened: 0, pullsUpdated: 0, otherCommits: 0 };
    const w = observer.writes.get(row.repo) ?? before;
    const bumpCommits = w.bumpCommits - before.bumpCommits;
    totalCommits += bumpCommits;
    console.log(
      `  ${row.repo.padEnd(10)} ${String(row.events).padStart(7)} ${String(row.pulls).padStart(5)} ${String(row.open).padStart(5)} ${String(row.commits).padStart(8)} ${String(bumpCommits).padStart(13)} ${String(w.pullsOpened + w.pullsUpdated - before.pullsOpened - before.pullsUpdated).padStart(10)} ${(row.events / Math.max(1, bumpCommits)).toFixed(1).padStart(14)}`,
    );
  }
  const commitsPerRepo = summarize(perRepo.map((row) => row.commits));
  console.log(
    `  in all: ${result.accepted.length} events → ${totalCommits} bump commits (${(result.accepted.length / Math.max(1, totalCommits)).toFixed(1)} events per commit, ${(totalCommits / targets.length).toFixed(1)} commits per image); commits per repository min ${Math.min(...perRepo.map((r) => r.commits))} p50 ${commitsPerRepo.p50} max ${commitsPerRepo.max}; PRs ${perRepo.reduce((s, r) => s + r.pulls, 0)} for ${targets.length} images`,
  );
  console.log(
    `  GitHub API calls by Escalator from the first event to drained: ${calls} (${(calls / targets.length).toFixed(1)} per image); simulator 5xx answers ${observer.serverErrors}`,
  );
  console.log(`memory (MB, RSS / V8 heapUsed), every ${MEM_EVERY_SECONDS} s`);
  for (const line of memory.table()) console.log(`  ${line}`);
  for (const peak of memory.peaks())
    console.log(
      `  peak ${peak.name.padEnd(9)} RSS ${peak.rssMb.toFixed(0)} MB at +${(peak.at / 1000).toFixed(0)} s, heapUsed ${peak.heapMb.toFixed(0)} MB${peak.name === 'bench' ? ' (simulator + driver)' : ''}`,
    );
  const after = memory.samples.at(-1);
  if (after)
    console.log(
      `  after the drain: ${[...after.readings].map(([name, r]) => `${name} ${r.rssMb.toFixed(0)} / ${r.heapMb.toFixed(0)}`).join(', ')}`,
    );
  console.log('nothing lost');
  console.log(
    `  ${wrong.length === 0 ? 'ok  ' : 'FAIL'} every image's dev overlay (open bump PR, else main) equals, byte for byte, the overlay at its newest accepted tag — ${targets.length} checked, ${wrong.length} wrong`,
  );
  for (const line of wrong.slice(0, 20)) console.log(`         ✗ ${line}`);
  if (wrong.length > 0 || missing.length > 0 || !drained.drained || failed > 0) exitCode = 1;
  console.log(
    `load average at start ${startLoad}, at the end ${loadavg()}; duration ${((Date.now() - startedAt) / 1000).toFixed(0)} s; run directory ${stack.runDir}${exitCode ? ' (kept)' : ''}`,
  );
} catch (error) {
  exitCode = 1;
  throw error;
} finally {
  senderProcess?.kill();
  await memory.stop().catch(() => undefined);
  await stack.close(exitCode !== 0 || process.env.LOAD_KEEP === '1');
}
process.exitCode = exitCode;
