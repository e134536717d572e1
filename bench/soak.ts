/**
 * `npm run bench:soak` (`npx tsx bench/soak.ts`): a steady mix of events for 15 minutes, then a
 * check that nothing accepted was lost; throughput, intake and event → PR latency, and whether the
 * memory of the web and worker processes levels off.
 *
 * 1. start the sandbox GitHub (this process), Escalator's web role and SOAK_WORKERS worker
 *    processes (default 2) on the shared Redis under a random prefix; seed SOAK_REPOS GitOps
 *    repositories (4) × SOAK_APPS apps (3), each app its own image, dev from the registry
 *    (semver) and staging promoted from dev; one person's pull request open per repository
 * 2. for SOAK_SECONDS (900), SOAK_RATE events per second (5), open loop, mixed by SOAK_MIX
 *    (images:updates:merges, default 80:10:10):
 *    - an image push: a random image's next tag, alternately `POST /registry/distribution` and
 *      `POST /api/v1/images` (no retry: every non-202 is counted)
 *    - a pull request update: a push to a person's PR (GitHub sends a signed
 *      `pull_request.synchronize`; Escalator renders the diff, comments and sets `escalator/diff`)
 *    - a merge of a random open Escalator PR (bump PR → promotion PR; promotion PR → staging)
 * 3. meanwhile sample RSS and V8 heapUsed of every Escalator process every MEM_EVERY_SECONDS (15)
 * 4. drain (every queue empty; the chaos run's drain), at most SOAK_DRAIN_SECONDS (600)
 * 5. check: every image's dev overlay (open bump PR, else main) is at its newest accepted tag;
 *    staging (open promotion PR, else main) runs what dev runs on main; every accepted event was
 *    shown by a bump PR (its tag or a newer one); every person's PR head has its rendered diff
 * 6. print throughput, intake p50/p99, event → PR p50/p99 (per third of the run too), the memory
 *    table and the plateau verdict (mean of the last third against the middle third)
 * Figures only for timings. Exit code 1 when something accepted was lost, the run did not drain,
 * or an Escalator process's memory did not level off (last third > 1.1 × middle third).
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Queue } from 'bullmq';
import { seededRandom } from './chaos/driver.js';
import { drain } from './chaos/drain.js';
import { overlayPath, overlayText, tagOf, targetsOf } from './load/fixture.js';
import { MemorySampler, plateauVerdict } from './load/memory.js';
import { People } from './load/people.js';
import { SenderProcess, type ScheduledEvent } from './load/sender.js';
import { startLoadStack } from './load/stack.js';
import { banner, loadavg, ms, sleep, summarize } from './support/stats.js';

const SECONDS = Number(process.env.SOAK_SECONDS ?? 900);
const RATE = Number(process.env.SOAK_RATE ?? 5);
const REPOS = Number(process.env.SOAK_REPOS ?? 4);
const APPS = Number(process.env.SOAK_APPS ?? 3);
const WORKERS = Number(process.env.SOAK_WORKERS ?? 2);
const DRAIN_SECONDS = Number(process.env.SOAK_DRAIN_SECONDS ?? 600);
const MEM_EVERY_SECONDS = Number(process.env.MEM_EVERY_SECONDS ?? 15);
const SEED = Number(process.env.SOAK_SEED ?? 15);
const mix = (process.env.SOAK_MIX ?? '80:10:10').split(':').map(Number);
if (mix.length !== 3 || mix.some((n) => !Number.isFinite(n) || n < 0))
  throw new Error('SOAK_MIX must be three numbers images:updates:merges, e.g. 80:10:10');
const [mixImages = 0, mixUpdates = 0, mixMerges = 0] = mix;
const mixTotal = mixImages + mixUpdates + mixMerges;
const LAG_RESOLUTION_MS = 10;

const startedAt = Date.now();
const phase = (text: string) =>
  console.log(`  [+${((Date.now() - startedAt) / 1000).toFixed(1).padStart(6)} s] ${text}   load ${loadavg()}`);
const startLoad = loadavg();
banner(
  `bench/soak.ts — ${RATE} events/s for ${SECONDS} s (images:updates:merges ${mixImages}:${mixUpdates}:${mixMerges}), ${REPOS} repositories × ${APPS} apps`,
);
console.log(
  `  ${WORKERS} worker processes, 1 web process; ESCALATOR_DEBOUNCE_MS default (1.5 s); seed ${SEED}; memory every ${MEM_EVERY_SECONDS} s`,
);

const stack = await startLoadStack({
  name: 'soak',
  repos: REPOS,
  apps: APPS,
  environments: ['dev', 'staging'],
  workers: WORKERS,
  progress: phase,
});
const lag = monitorEventLoopDelay({ resolution: LAG_RESOLUTION_MS });
const memory = new MemorySampler(() => stack.processes(), MEM_EVERY_SECONDS * 1000, startedAt);
const queues = ['image', 'bump', 'promote', 'index', 'diff'].map(
  (name) => new Queue(name, { connection: stack.probe, prefix: stack.prefix }),
);
let exitCode = 0;
let senderProcess: SenderProcess | undefined;
try {
  const { fixture, observer } = stack;
  const targets = targetsOf(fixture);
  const random = seededRandom(SEED);
  const people = new People(stack.client, stack.webhooks, fixture, seededRandom(SEED ^ 0x5eed), {
    concurrency: 2,
    maxBacklog: 20,
  });
  await people.openPulls();
  phase(`${people.pulls.length} people's pull requests opened`);
  const sentVersion = new Map<string, number>();
  const backlog = async () => {
    const counts = await Promise.all(
      queues.map(
        async (queue) => [queue.name, await queue.getJobCounts('waiting', 'active', 'delayed', 'prioritized')] as const,
      ),
    );
    return counts
      .map(([name, c]) => `${name} ${(c.waiting ?? 0) + (c.prioritized ?? 0)}/${c.active ?? 0}/${c.delayed ?? 0}`)
      .join(', ');
  };

  // 2 + 3. The steady mix, open loop: the whole schedule is drawn first; image events go to the
  // sender process, people's actions are started from here at their times.
  const schedule: ScheduledEvent[] = [];
  const actions: Array<{ offsetMs: number; kind: 'update' | 'merge' }> = [];
  const sent = { images: 0, updates: 0, merges: 0 };
  for (let i = 0; (i * 1000) / RATE < SECONDS * 1000; i++) {
    const offsetMs = (i * 1000) / RATE;
    const roll = random() * mixTotal;
    if (roll < mixImages) {
      const target = targets[Math.floor(random() * targets.length)]!;
      const version = (sentVersion.get(target.image) ?? 0) + 1;
      sentVersion.set(target.image, version);
      schedule.push({
        offsetMs,
        image: target.image,
        version,
        source: sent.images++ % 2 === 0 ? 'distribution' : 'ci',
      });
    } else if (roll < mixImages + mixUpdates) {
      sent.updates++;
      actions.push({ offsetMs, kind: 'update' });
    } else {
      sent.merges++;
      actions.push({ offsetMs, kind: 'merge' });
    }
  }
  memory.phase = 'drive';
  memory.start();
  lag.enable();
  const sending = new SenderProcess(stack.webUrl, stack.tokens, schedule);
  senderProcess = sending;
  // People's actions follow the sender's clock.
  const driveStart = await Promise.race([sending.started, sending.result.then(() => Date.now())]);
  let lastProgress = driveStart;
  for (const action of actions) {
    const wait = driveStart + action.offsetMs - Date.now();
    if (wait > 1) await sleep(wait);
    if (action.kind === 'update') people.update();
    else people.merge();
    if (Date.now() - lastProgress >= 60_000) {
      lastProgress = Date.now();
      const last = memory.samples.at(-1);
      phase(
        `accepted ${sending.progress.accepted}/${sending.progress.sent}, updates ${people.stats.updates}, merges ${people.stats.mergedBump}+${people.stats.mergedPromotion}; jobs waiting/active/delayed: ${await backlog()}; MB ${last ? [...last.readings].map(([name, r]) => `${name} ${r.rssMb.toFixed(0)}/${r.heapMb.toFixed(0)}`).join(' ') : ''}`,
      );
    }
  }
  const result = await sending.result;
  await sleep(Math.max(0, driveStart + SECONDS * 1000 - Date.now()));
  const driveSeconds = (Date.now() - driveStart) / 1000;
  await people.idle();
  const acceptedVersion = new Map<string, number>();
  for (const event of result.accepted)
    acceptedVersion.set(event.image, Math.max(acceptedVersion.get(event.image) ?? 0, event.version));
  const failed = Object.values(result.failures).reduce((sum, n) => sum + n, 0);
  const latencies = [...result.latencies.ci, ...result.latencies.distribution];
  phase(`drive over after ${driveSeconds.toFixed(0)} s; jobs waiting/active/delayed: ${await backlog()}; draining`);

  // 4. Drain.
  memory.phase = 'drain';
  const drained = await drain({
    redis: stack.probe,
    prefix: stack.prefix,
    webhooks: stack.webhooks,
    idle: () => stack.sim.context.webhooks.idle(),
    recoverEveryMs: stack.recoverEveryMs,
    timeoutMs: DRAIN_SECONDS * 1000,
    origin: driveStart,
  });
  lag.disable();
  memory.phase = 'after';
  await memory.stop();
  phase(`drained: ${drained.drained} (${(drained.tookMs / 1000).toFixed(1)} s); checking`);

  // 5. Checks, through the REST API.
  const read = async (repo: string, path: string, ref: string): Promise<string | null> => {
    try {
      const { data } = await stack.user.rest.repos.getContent({ owner: fixture.owner, repo, path, ref });
      return !Array.isArray(data) && data.type === 'file' ? Buffer.from(data.content, 'base64').toString('utf8') : null;
    } catch (error) {
      if ((error as { status?: number }).status === 404) return null;
      throw error;
    }
  };
  const tagIn = (text: string | null) => (text === null ? 'missing' : (/newTag: (\S+)/.exec(text)?.[1] ?? '?'));
  const devWrong: string[] = [];
  const stagingWrong: string[] = [];
  let pullsTotal = 0;
  for (const repo of fixture.repos) {
    const pulls = await stack.user.paginate(stack.user.rest.pulls.list, {
      owner: fixture.owner,
      repo,
      state: 'all',
      per_page: 100,
    });
    pullsTotal += pulls.length;
    for (const app of fixture.apps) {
      const image = targets.find((t) => t.repo === repo && t.app === app)!.image;
      const tag = tagOf(acceptedVersion.get(image) ?? 0);
      const bump = pulls.find((pull) => pull.state === 'open' && pull.head.ref === `escalator/dev/${app}`);
      const dev = await read(repo, overlayPath(app, 'dev'), bump?.head.sha ?? 'main');
      if (dev !== overlayText(image, tag))
        devWrong.push(`${repo}/${app}: dev on ${bump ? `PR #${bump.number}` : 'main'} is at ${tagIn(dev)}, not ${tag}`);
      const devMain = bump ? await read(repo, overlayPath(app, 'dev'), 'main') : dev;
      const promotion = pulls.find(
        (pull) => pull.state === 'open' && pull.head.ref === `escalator/promote/staging/${app}`,
      );
      const staging = await read(repo, overlayPath(app, 'staging'), promotion?.head.sha ?? 'main');
      if (staging !== devMain)
        stagingWrong.push(
          `${repo}/${app}: staging on ${promotion ? `PR #${promotion.number}` : 'main'} is at ${tagIn(staging)}, dev on main at ${tagIn(devMain)}`,
        );
    }
  }
  const e2e: Array<{ at: number; ms: number }> = [];
  const neverShown: string[] = [];
  for (const event of result.accepted) {
    const target = targets.find((t) => t.image === event.image)!;
    const shownAt = observer.firstShown(target.repo, `escalator/dev/${target.app}`, event.version, 0);
    if (shownAt === undefined) neverShown.push(`${event.image}:${tagOf(event.version)}`);
    else e2e.push({ at: event.at, ms: Math.max(0, shownAt - event.at) });
  }
  const updateMs: Array<{ at: number; ms: number }> = [];
  let ownDiff = 0;
  let superseded = 0;
  const headsWithoutDiff: string[] = [];
  for (const pull of people.pulls) {
    pull.pushes.forEach((push, i) => {
      if (i === 0) return; // the opening push, before the drive
      const own = observer.diffChecks.get(push.sha);
      const later = pull.pushes
        .slice(i)
        .map((p) => observer.diffChecks.get(p.sha))
        .find((at) => at !== undefined);
      if (own !== undefined) ownDiff++;
      else if (later !== undefined) superseded++;
      if (later !== undefined) updateMs.push({ at: push.at, ms: Math.max(0, later - push.at) });
    });
    const head = pull.pushes.at(-1)!;
    if (!observer.diffChecks.has(head.sha))
      headsWithoutDiff.push(`${pull.repo}#${pull.number} head ${head.sha.slice(0, 7)}`);
  }

  // 6. Report.
  const intakeAll = summarize(latencies);
  const writes = [...observer.writes.values()].reduce(
    (sum, w) => ({
      bump: sum.bump + w.bumpCommits,
      other: sum.other + w.otherCommits,
      opened: sum.opened + w.pullsOpened,
      updated: sum.updated + w.pullsUpdated,
    }),
    { bump: 0, other: 0, opened: 0, updated: 0 },
  );
  const perSecond = (n: number) => (n / driveSeconds).toFixed(2);
  console.log('');
  console.log(`throughput over the ${driveSeconds.toFixed(0)} s drive`);
  console.log(
    `  image events: sent ${result.sent}, accepted ${result.accepted.length} (${perSecond(result.accepted.length)}/s), not accepted ${failed}${failed > 0 ? ` ${JSON.stringify(result.failures)}` : ''}`,
  );
  console.log(
    `  PR updates: offered ${sent.updates}, pushed ${people.stats.updates}, rendered diff on their own head ${ownDiff} (${perSecond(ownDiff)}/s), superseded by a newer push first ${superseded}`,
  );
  console.log(
    `  merges: offered ${sent.merges}, bump PRs merged ${people.stats.mergedBump}, promotion PRs merged ${people.stats.mergedPromotion} (${perSecond(people.stats.mergedBump + people.stats.mergedPromotion)}/s), refused (head moved or closed) ${people.stats.raced}, nothing open ${people.stats.nothingToMerge}`,
  );
  console.log(
    `  people's actions dropped because the simulator was behind: ${people.stats.dropped}; waited for their turn p50 ${ms(summarize(people.stats.waitedMs).p50)} p99 ${ms(summarize(people.stats.waitedMs).p99)}; push took p50 ${ms(summarize(people.stats.tookMs.update).p50)}, merge p50 ${ms(summarize(people.stats.tookMs.merge).p50)}${people.stats.errors.length > 0 ? `; errors ${people.stats.errors.length}: ${[...new Set(people.stats.errors)].slice(0, 3).join(' | ')}` : ''}`,
  );
  console.log(
    `  Escalator wrote: ${writes.bump} bump commits (${perSecond(writes.bump)}/s), ${writes.other} promotion commits, ${writes.opened} PRs opened, ${writes.updated} PR updates; ${observer.calls} GitHub API calls (${perSecond(observer.calls)}/s); simulator 5xx ${observer.serverErrors}; ${pullsTotal} PRs in all`,
  );
  const loop = {
    p50: lag.percentile(50) / 1e6 - LAG_RESOLUTION_MS,
    p99: lag.percentile(99) / 1e6 - LAG_RESOLUTION_MS,
    max: lag.max / 1e6 - LAG_RESOLUTION_MS,
  };
  console.log(
    'latency (intake timed in the sender process, which does nothing else; the rest in the bench process, which hosts the simulator)',
  );
  const row = (label: string, samples: number[]) => {
    const s = summarize(samples);
    return `  ${label.padEnd(44)} p50 ${ms(s.p50).padStart(8)}   p90 ${ms(s.p90).padStart(8)}   p99 ${ms(s.p99).padStart(8)}   max ${ms(s.max).padStart(8)}   n=${s.n}`;
  };
  console.log(row('intake, answer time (both routes)', latencies));
  for (const [source, samples] of Object.entries(result.latencies)) console.log(row(`  ${source}`, samples));
  console.log(
    row(
      'event accepted → bump PR shows its tag',
      e2e.map((s) => s.ms),
    ),
  );
  console.log(
    row(
      'PR update pushed → its rendered diff (check)',
      updateMs.map((s) => s.ms),
    ),
  );
  const thirds = [0, 1, 2].map(
    (k) => [driveStart + (k * SECONDS * 1000) / 3, driveStart + ((k + 1) * SECONDS * 1000) / 3] as const,
  );
  for (const [k, [from, to]] of thirds.entries()) {
    const inThird = (s: { at: number }) => s.at >= from && s.at < to;
    const accepted = result.accepted.filter(inThird).length;
    const e = summarize(e2e.filter(inThird).map((s) => s.ms));
    const u = summarize(updateMs.filter(inThird).map((s) => s.ms));
    console.log(
      `    third ${k + 1}: events accepted ${accepted}; event → PR p50 ${ms(e.p50)} p99 ${ms(e.p99)}; update → diff p50 ${ms(u.p50)} p99 ${ms(u.p99)}`,
    );
  }
  console.log(
    `  intake p50 ${ms(intakeAll.p50)} / p99 ${ms(intakeAll.p99)}; sends left late by p99 ${ms(result.lateness.p99)} (max ${ms(result.lateness.max)}), sender event-loop delay p99 ${ms(result.lag.p99)}`,
  );
  console.log(
    `  bench process (simulator) event-loop delay during the run p50 ${ms(loop.p50)}, p99 ${ms(loop.p99)}, max ${ms(loop.max)} (part of the event → PR and update → diff times)`,
  );
  console.log(
    `drain: ${drained.drained ? 'every queue empty' : 'NOT DRAINED'} after ${(drained.tookMs / 1000).toFixed(1)} s; failed jobs ${JSON.stringify(drained.failed)}${drained.failedReasons.length > 0 ? `: ${drained.failedReasons.slice(0, 4).join(' | ')}` : ''}`,
  );
  for (const line of drained.timeline) console.log(`  ${line}`);
  if (Object.keys(drained.undelivered).length > 0)
    console.log(`  webhooks never delivered: ${JSON.stringify(drained.undelivered)}`);
  console.log(`memory (MB, RSS / V8 heapUsed), every ${MEM_EVERY_SECONDS} s`);
  for (const line of memory.table()) console.log(`  ${line}`);
  console.log(
    `plateau: mean of the last third of the drive's samples against the middle third (${memory.samples.filter((s) => s.phase === 'drive').length} samples)`,
  );
  const flat = plateauVerdict(memory.plateau('drive'), (line) => console.log(line));
  for (const peak of memory.peaks())
    console.log(
      `  peak ${peak.name.padEnd(9)} RSS ${peak.rssMb.toFixed(0)} MB at +${(peak.at / 1000).toFixed(0)} s, heapUsed ${peak.heapMb.toFixed(0)} MB`,
    );
  console.log('nothing lost');
  const checks: Array<[string, number, string[]]> = [
    ["every image's dev overlay (open bump PR, else main) is at its newest accepted tag", targets.length, devWrong],
    ['staging (open promotion PR, else main) runs what dev runs on main', targets.length, stagingWrong],
    ['every accepted event was shown by a bump PR (its tag or a newer one)', result.accepted.length, neverShown],
    ["every person's pull request has the rendered diff of its last push", people.pulls.length, headsWithoutDiff],
  ];
  for (const [name, checked, violations] of checks) {
    console.log(
      `  ${violations.length === 0 ? 'ok  ' : 'FAIL'} ${name} — ${checked} checked, ${violations.length} violations`,
    );
    for (const line of violations.slice(0, 10)) console.log(`         ✗ ${line}`);
  }
  if (checks.some(([, , violations]) => violations.length > 0) || !drained.drained || !flat || failed > 0) exitCode = 1;
  console.log(
    `load average at start ${startLoad}, at the end ${loadavg()}; duration ${((Date.now() - startedAt) / 1000).toFixed(0)} s; run directory ${stack.runDir}${exitCode ? ' (kept)' : ''}`,
  );
} catch (error) {
  exitCode = 1;
  throw error;
} finally {
  senderProcess?.kill();
  await memory.stop().catch(() => undefined);
  await Promise.all(queues.map((queue) => queue.close()));
  await stack.close(exitCode !== 0 || process.env.LOAD_KEEP === '1');
}
process.exitCode = exitCode;
