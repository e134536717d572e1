/**
 * `npm run bench:burst` (`npx tsx bench/burst.ts`): one installation floods Escalator with 10,000
 * registry events while three others send single events, against a GitHub that enforces its
 * secondary rate limits, with Escalator's own write budget at its production defaults (72 writes
 * a minute, 460 an hour per installation). It shows that Escalator draws no secondary-limit answer
 * by itself, what a PR costs in GitHub calls, how many reads a 304 answers, and how long another
 * tenant's single event takes while one tenant floods, next to the same with no flood.
 * Expected run time about 6–8 minutes on 2 shared cores (setup ~1 min, quiet phase ~1 min, flood
 * 60 s, then the flooded installation's budget paces the drain ~3 min); it gives up after
 * BURST_DRAIN_SECONDS (600) from the flood's first event.
 *
 * 1. start the sandbox GitHub (this process) with GitHub's secondary limits per installation
 *    (80 content-creating requests a minute, 500 an hour, 100 concurrent; BURST_SECONDARY=0 turns
 *    them off), Escalator's web role and BURST_WORKERS worker processes (2) on the shared Redis
 *    under a random prefix; seed BURST_REPOS GitOps repositories (20) × BURST_APPS apps (10) = 200
 *    images, the repositories split over BURST_INSTALLATIONS owners (4: the user `developer`, A,
 *    and the organizations tenant-b, tenant-c, tenant-d), each its own App installation; every app
 *    its own image in `apps/<app>/overlays/dev` (from the registry, semver, no auto-merge); wait
 *    until all are indexed
 * 2. quiet phase: BURST_QUIET_PROBES (3) single events per installation, one every
 *    BURST_QUIET_GAP_SECONDS (3), each a new tag of an image that has no PR yet; nothing else runs
 * 3. flood: BURST_EVENTS registry events (10,000) evenly over BURST_SECONDS (60), open loop, on
 *    BURST_FLOOD_IMAGES (20) images of installation A, each the picked image's next tag, half
 *    `POST /registry/distribution`, half `POST /api/v1/images`. Every BURST_PROBE_EVERY_SECONDS (5),
 *    from the flood's start until BURST_PROBE_SECONDS (120, so also while A's backlog drains), a
 *    single event for B, C, D in turn, each a new tag of an image that has no PR yet. All sent from
 *    a child process that does nothing else; no retries, every non-202 is counted
 * 4. wait until every image's bump PR title names its newest accepted tag (seen in the simulator,
 *    no polling), then until every queue is empty; give up after BURST_DRAIN_SECONDS
 * 5. read every dev overlay back through the REST API (the open bump PR's head, else main) and
 *    compare it byte for byte with the overlay at its newest accepted tag
 * 6. print: single-event latency (event → its PR names the tag) per installation, quiet and during
 *    the flood, p50/max and their ratio; secondary-limit answers drawn; GitHub calls per PR written
 *    by route, quiet and flood; the 304 share of GETs; the busiest minute of writes per
 *    installation; coalescing; intake; memory peaks; load average
 * Why only 20 of A's images flood: with the production budget an installation writes at most 383
 * routine requests an hour (5/6 of 460), and a new bump PR with its rendered diff costs about 8
 * writes, so one installation can bring at most ~45 images to a new PR in an hour. The 10,000
 * events coalesce on 20 images into a few commits each, as the product does with a burst.
 * Figures only (no timing is asserted). Exit code 1 when an accepted event's tag is missing from
 * its repository or the run did not drain in time; events intake did not answer 202 are counted
 * and printed (one without an answer may have been taken, so its version is allowed in the
 * overlay check). Keys under the prefix are deleted at the end.
 */
import { DEFAULT_WRITE_LIMITS } from '../src/adapters/github/write-budget.js';
import { seededRandom } from './chaos/driver.js';
import { drain } from './chaos/drain.js';
import { overlayPath, overlayText, tagOf, targetsOf } from './load/fixture.js';
import { bumpJobTimes, imageJobTimes } from './load/job-times.js';
import { MemorySampler } from './load/memory.js';
import type { ObservedCall } from './load/observe.js';
import { SenderProcess, type ScheduledEvent, type SenderResult } from './load/sender.js';
import { startLoadStack } from './load/stack.js';
import { banner, loadavg, ms, sleep, summarize } from './support/stats.js';

const number = (name: string, fallback: number) => Number(process.env[name] ?? fallback);
const EVENTS = number('BURST_EVENTS', 10_000);
const SECONDS = number('BURST_SECONDS', 60);
const REPOS = number('BURST_REPOS', 20);
const APPS = number('BURST_APPS', 10);
const INSTALLATIONS = number('BURST_INSTALLATIONS', 4);
const FLOOD_IMAGES = number('BURST_FLOOD_IMAGES', 20);
const QUIET_PROBES = number('BURST_QUIET_PROBES', 3);
const QUIET_GAP_SECONDS = number('BURST_QUIET_GAP_SECONDS', 3);
const PROBE_EVERY_SECONDS = number('BURST_PROBE_EVERY_SECONDS', 5);
const PROBE_SECONDS = number('BURST_PROBE_SECONDS', 120);
const WORKERS = number('BURST_WORKERS', 2);
const DRAIN_SECONDS = number('BURST_DRAIN_SECONDS', 600);
const MEM_EVERY_SECONDS = number('MEM_EVERY_SECONDS', 5);
const SEED = number('BURST_SEED', 9);
const SECONDARY = process.env.BURST_SECONDARY !== '0';
const WRITES_PER_MINUTE = DEFAULT_WRITE_LIMITS.perMinute.person;
const WRITES_PER_HOUR = DEFAULT_WRITE_LIMITS.perHour.person;

const startedAt = Date.now();
const phase = (text: string) =>
  console.log(`  [+${((Date.now() - startedAt) / 1000).toFixed(1).padStart(6)} s] ${text}   load ${loadavg()}`);
const startLoad = loadavg();
banner(
  `bench/burst.ts — ${EVENTS} registry events in ${SECONDS} s from one installation of ${INSTALLATIONS}, ${REPOS * APPS} images in ${REPOS} repositories`,
);
console.log(
  `  GitHub's secondary limits ${SECONDARY ? 'ENFORCED (80 writes/min, 500/h, 100 concurrent per installation)' : 'OFF (BURST_SECONDARY=0)'}; Escalator's write budget at its production default (${WRITES_PER_MINUTE}/min, ${WRITES_PER_HOUR}/h per installation)`,
);
console.log(`  ${WORKERS} worker processes, 1 web process; ESCALATOR_DEBOUNCE_MS default (1.5 s); seed ${SEED}`);
if (REPOS % INSTALLATIONS !== 0)
  throw new Error(`BURST_REPOS (${REPOS}) must be a multiple of BURST_INSTALLATIONS (${INSTALLATIONS})`);

const stack = await startLoadStack({
  name: 'burst',
  repos: REPOS,
  apps: APPS,
  environments: ['dev'],
  moreOwners: Array.from({ length: INSTALLATIONS - 1 }, (_, i) => `tenant-${String.fromCharCode(98 + i)}`),
  workers: WORKERS,
  secondaryLimits: SECONDARY,
  env: {
    ESCALATOR_GITHUB_WRITES_PER_MINUTE: String(WRITES_PER_MINUTE),
    ESCALATOR_GITHUB_WRITES_PER_HOUR: String(WRITES_PER_HOUR),
  },
  progress: phase,
});
const memory = new MemorySampler(() => stack.processes(), MEM_EVERY_SECONDS * 1000, startedAt);
memory.start();
let exitCode = 0;
let senderProcess: SenderProcess | undefined;

/** A single event whose latency is measured: sent at `sentAt`, shown in its PR's title at `shownAt`. */
interface Probe {
  owner: string;
  repo: string;
  app: string;
  image: string;
  version: number;
  offsetMs: number;
  sentAt: number;
  /** When intake answered 202. */
  answeredAt?: number;
  shownAt?: number;
  /** Where the time went (ms), from the job hashes: see `stages` below. */
  stages?: Record<Stage, number>;
}

/** sent → 202; 202 → image job starts (below 0 when the job starts before the answer reaches the sender); image job ends → bump job starts (1.5 s debounce included); bump starts → PR shows the tag. */
const STAGES = ['intake', 'image queue', 'to bump start', 'bump run'] as const;
type Stage = (typeof STAGES)[number];

try {
  const { fixture, observer } = stack;
  const targets = targetsOf(fixture);
  const [flooder = fixture.owner, ...others] = fixture.owners;
  const label = new Map(fixture.owners.map((owner, i) => [owner, `${String.fromCharCode(65 + i)} (${owner})`]));
  const random = seededRandom(SEED);
  const sentVersion = new Map<string, number>();
  const nextVersion = (image: string) => {
    const version = (sentVersion.get(image) ?? 0) + 1;
    sentVersion.set(image, version);
    return version;
  };
  const floodTargets = targets.filter((t) => t.owner === flooder).slice(0, FLOOD_IMAGES);
  // Images that get single events: never flooded, each used once, so every probe opens a new PR.
  const fresh = new Map(
    fixture.owners.map((owner) => [owner, targets.filter((t) => t.owner === owner && !floodTargets.includes(t))]),
  );
  const takeFresh = (owner: string) => {
    const target = fresh.get(owner)?.shift();
    if (!target) throw new Error(`installation ${owner} has no image left for a single event; lower the probe count`);
    return target;
  };
  const probeEvent = (owner: string, offsetMs: number): { event: ScheduledEvent; probe: Probe } => {
    const target = takeFresh(owner);
    const version = nextVersion(target.image);
    return {
      event: { offsetMs, image: target.image, version, source: 'ci' },
      probe: { ...target, version, offsetMs, sentAt: 0 },
    };
  };
  const accepted = new Map<string, number>();
  // Versions sent whose answer never came (the web process too busy to answer within 30 s):
  // Escalator may have taken them, so the overlay may hold one of them instead of the accepted one.
  const unanswered = new Map<string, number[]>();
  const takeAccepted = (result: SenderResult) => {
    for (const event of result.accepted)
      accepted.set(event.image, Math.max(accepted.get(event.image) ?? 0, event.version));
    for (const event of result.unanswered)
      unanswered.set(event.image, [...(unanswered.get(event.image) ?? []), event.version]);
  };
  const timeProbes = (probes: Probe[], result: SenderResult) => {
    for (const probe of probes) {
      probe.sentAt = result.startedAt + probe.offsetMs;
      probe.answeredAt = result.accepted.find((e) => e.image === probe.image && e.version === probe.version)?.at;
    }
  };
  const shown = (probe: Probe) =>
    observer.firstShown(probe.repo, `escalator/dev/${probe.app}`, probe.version, probe.sentAt);
  const awaitProbes = async (probes: Probe[], until: number) => {
    while (Date.now() < until && probes.some((p) => shown(p) === undefined)) await sleep(100);
    for (const probe of probes) probe.shownAt = shown(probe);
  };

  // 2. Quiet phase: single events, one at a time, nothing else running.
  const quiet: Probe[] = [];
  const quietSchedule: ScheduledEvent[] = [];
  for (let round = 0; round < QUIET_PROBES; round++)
    for (const owner of fixture.owners) {
      const { event, probe } = probeEvent(owner, quietSchedule.length * QUIET_GAP_SECONDS * 1000);
      quietSchedule.push(event);
      quiet.push(probe);
    }
  memory.phase = 'quiet';
  phase(`quiet phase: ${quiet.length} single events, one every ${QUIET_GAP_SECONDS} s`);
  const quietStart = Date.now();
  senderProcess = new SenderProcess(stack.webUrl, stack.tokens, quietSchedule);
  const quietResult = await senderProcess.result;
  timeProbes(quiet, quietResult);
  takeAccepted(quietResult);
  await awaitProbes(quiet, Date.now() + 60_000);
  const quietFailed = Object.values(quietResult.failures).reduce((sum, n) => sum + n, 0);
  phase(`quiet phase done: ${quiet.filter((p) => p.shownAt).length} of ${quiet.length} shown in their PR`);

  // 3. The flood from installation A, with single events from the others at intervals.
  const everyMs = (SECONDS * 1000) / EVENTS;
  const schedule: ScheduledEvent[] = [];
  for (let i = 0; i < EVENTS; i++) {
    const target = floodTargets[Math.floor(random() * floodTargets.length)]!;
    schedule.push({
      offsetMs: i * everyMs,
      image: target.image,
      version: nextVersion(target.image),
      source: i % 2 === 0 ? 'distribution' : 'ci',
    });
  }
  const during: Probe[] = [];
  if (others.length > 0)
    for (let k = 1; k * PROBE_EVERY_SECONDS <= PROBE_SECONDS; k++) {
      const { event, probe } = probeEvent(others[(k - 1) % others.length]!, k * PROBE_EVERY_SECONDS * 1000);
      schedule.push(event);
      during.push(probe);
    }
  schedule.sort((a, b) => a.offsetMs - b.offsetMs);
  memory.phase = 'flood';
  phase(
    `flood: ${EVENTS} events on ${floodTargets.length} images of ${label.get(flooder)}; ${during.length} single events of the others`,
  );
  const floodStart = Date.now();
  senderProcess = new SenderProcess(stack.webUrl, stack.tokens, schedule);
  const result = await senderProcess.result;
  const burstStart = result.startedAt;
  timeProbes(during, result);
  takeAccepted(result);
  const floodSent = result.accepted.filter((e) => floodTargets.some((t) => t.image === e.image)).length;
  const failed = Object.values(result.failures).reduce((sum, n) => sum + n, 0);
  phase(
    `sent ${result.sent} in ${((result.lastSentAt - burstStart) / 1000).toFixed(1)} s: ${result.accepted.length} accepted (${floodSent} of the flood), ${failed} not`,
  );

  // 4. Until every image's PR names its newest accepted tag, then until the queues are empty.
  memory.phase = 'drain';
  const deadline = burstStart + DRAIN_SECONDS * 1000;
  await awaitProbes(during, Math.min(deadline, Date.now() + 120_000));
  const behind = () =>
    targets.filter((t) => (accepted.get(t.image) ?? 0) > observer.highestShown(t.repo, `escalator/dev/${t.app}`));
  let lastReport = Date.now();
  while (behind().length > 0 && Date.now() < deadline) {
    await sleep(250);
    if (Date.now() - lastReport >= 30_000) {
      lastReport = Date.now();
      phase(`${behind().length} images not yet at their newest tag in their PR`);
    }
  }
  const missing = behind();
  const outcomeAt = Date.now();
  phase(
    missing.length === 0
      ? 'every image at its newest tag in its PR; draining the queues'
      : `GAVE UP: ${missing.length} images not at their newest tag ${DRAIN_SECONDS} s after the flood began`,
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
  memory.phase = 'after';
  await memory.stop();
  phase(`drained: ${drained.drained} (${(drained.tookMs / 1000).toFixed(1)} s)`);
  const imageTimes = await imageJobTimes(
    stack.probe,
    stack.prefix,
    new Set([...quiet, ...during].map((p) => `${p.image}:${tagOf(p.version)}`)),
  );
  for (const probe of [...quiet, ...during]) {
    const image = imageTimes.get(`${probe.image}:${tagOf(probe.version)}`);
    if (!image?.processedAt || !image.finishedAt || !probe.answeredAt || !probe.shownAt) continue;
    const bumps = await bumpJobTimes(stack.probe, stack.prefix, { ...probe, environment: 'dev' });
    const bump = bumps.find((job) => job.processedAt !== undefined && job.processedAt >= image.finishedAt!);
    if (!bump?.processedAt) continue;
    probe.stages = {
      intake: probe.answeredAt - probe.sentAt,
      'image queue': image.processedAt - probe.answeredAt,
      'to bump start': bump.processedAt - image.finishedAt,
      'bump run': probe.shownAt - bump.processedAt,
    };
  }
  const quietCalls = observer.log.filter((c) => c.at >= quietStart && c.at < floodStart);
  const floodCalls = observer.log.filter((c) => c.at >= floodStart && c.at <= drainedAt);

  // 5. Read what GitHub holds.
  const wrong: string[] = [];
  const perRepo = new Map<string, { pulls: number; open: number; commits: number }>();
  const openTitle = new Map<string, string>();
  for (const repo of fixture.repos) {
    const owner = targets.find((t) => t.repo === repo)!.owner;
    const pulls = await stack.user.paginate(stack.user.rest.pulls.list, { owner, repo, state: 'all', per_page: 100 });
    let commits = 0;
    for (const pull of pulls)
      commits += (
        await stack.user.paginate(stack.user.rest.pulls.listCommits, {
          owner,
          repo,
          pull_number: pull.number,
          per_page: 100,
        })
      ).length;
    perRepo.set(repo, { pulls: pulls.length, open: pulls.filter((p) => p.state === 'open').length, commits });
    for (const target of targets.filter((t) => t.repo === repo)) {
      const version = accepted.get(target.image) ?? 0;
      const open = pulls.find((pull) => pull.state === 'open' && pull.head.ref === `escalator/dev/${target.app}`);
      if (open) openTitle.set(target.image, `#${open.number} "${open.title}"`);
      let text: string | null = null;
      try {
        const { data } = await stack.user.rest.repos.getContent({
          owner,
          repo,
          path: overlayPath(target.app, 'dev'),
          ref: open?.head.sha ?? 'main',
        });
        if (!Array.isArray(data) && data.type === 'file') text = Buffer.from(data.content, 'base64').toString('utf8');
      } catch (error) {
        if ((error as { status?: number }).status !== 404) throw error;
      }
      const allowed = [version, ...(unanswered.get(target.image) ?? []).filter((v) => v > version)];
      if (!allowed.some((v) => text === overlayText(target.image, tagOf(v))))
        wrong.push(
          `${owner}/${repo}/${target.app}: dev overlay on ${open ? `PR #${open.number}` : 'main'} is not at ${tagOf(version)}${text === null ? ' (missing)' : `: ${/newTag: (\S+)/.exec(text)?.[1] ?? '?'}`}`,
        );
    }
  }

  // 6. Report.
  const secondaryDrawn = observer.log.filter((c) => c.secondary).length;
  console.log('');
  console.log('SECONDARY-LIMIT ANSWERS DRAWN BY ESCALATOR');
  console.log(
    `  ${secondaryDrawn === 0 ? 'ok  ' : 'FAIL'} ${secondaryDrawn} answers of 403/429 with retry-after or the secondary-limit message (simulator's own count of refusals: ${stack.sim.secondaryRefused()}${SECONDARY ? '' : ', limits off'})`,
  );
  const byAccount = new Map<string, number>();
  for (const call of observer.log.filter((c) => c.secondary))
    byAccount.set(call.account, (byAccount.get(call.account) ?? 0) + 1);
  if (byAccount.size > 0) console.log(`       by installation: ${JSON.stringify(Object.fromEntries(byAccount))}`);

  console.log('fair tenants: one event → its PR names the tag (a new PR each), per installation');
  console.log(
    `  ${'installation'.padEnd(22)} ${'quiet n'.padStart(7)} ${'p50'.padStart(9)} ${'max'.padStart(9)}   ${'flood n'.padStart(7)} ${'p50'.padStart(9)} ${'max'.padStart(9)}   ${'p50 ×'.padStart(6)} ${'max ×'.padStart(6)}`,
  );
  const latencies = (probes: Probe[]) =>
    probes
      .filter((p) => p.shownAt !== undefined && p.answeredAt !== undefined)
      .map((p) => (p.shownAt as number) - p.sentAt);
  const answered = (probes: Probe[]) =>
    summarize(probes.filter((p) => p.answeredAt !== undefined).map((p) => (p.answeredAt as number) - p.sentAt));
  const afterAnswer = (probes: Probe[]) =>
    summarize(
      probes
        .filter((p) => p.shownAt !== undefined && p.answeredAt !== undefined)
        .map((p) => (p.shownAt as number) - (p.answeredAt as number)),
    );
  for (const owner of fixture.owners) {
    const q = summarize(latencies(quiet.filter((p) => p.owner === owner)));
    const ownDuring = during.filter((p) => p.owner === owner);
    const f = summarize(latencies(ownDuring));
    const unseen = ownDuring.filter((p) => p.answeredAt !== undefined && p.shownAt === undefined).length;
    const refused = ownDuring.filter((p) => p.answeredAt === undefined).length;
    console.log(
      `  ${label.get(owner)!.padEnd(22)} ${String(q.n).padStart(7)} ${ms(q.p50).padStart(9)} ${ms(q.max).padStart(9)}   ${owner === flooder ? '(floods)'.padStart(7) : String(f.n).padStart(7)} ${ms(f.p50).padStart(9)} ${ms(f.max).padStart(9)}   ${owner === flooder ? '' : `${(f.p50 / q.p50).toFixed(2).padStart(6)} ${(f.max / q.max).toFixed(2).padStart(6)}`}${unseen > 0 ? `   ${unseen} accepted, NOT SHOWN within 120 s` : ''}${refused > 0 ? `   ${refused} not answered 202 (left out)` : ''}`,
    );
  }
  const q = summarize(latencies(quiet.filter((p) => p.owner !== flooder)));
  const f = summarize(latencies(during));
  console.log(
    `  ${'B, C, D together'.padEnd(22)} ${String(q.n).padStart(7)} ${ms(q.p50).padStart(9)} ${ms(q.max).padStart(9)}   ${String(f.n).padStart(7)} ${ms(f.p50).padStart(9)} ${ms(f.max).padStart(9)}   ${(f.p50 / q.p50).toFixed(2).padStart(6)} ${(f.max / q.max).toFixed(2).padStart(6)}`,
  );
  const inFlood = during.filter((p) => p.offsetMs <= SECONDS * 1000);
  const afterFlood = during.filter((p) => p.offsetMs > SECONDS * 1000);
  const fi = summarize(latencies(inFlood));
  const fa = summarize(latencies(afterFlood));
  console.log(
    `    sent while A's events arrive (first ${SECONDS} s): n=${fi.n} p50 ${ms(fi.p50)} max ${ms(fi.max)};  while A's backlog drains (to ${PROBE_SECONDS} s): n=${fa.n} p50 ${ms(fa.p50)} max ${ms(fa.max)}`,
  );
  const othersQuiet = quiet.filter((p) => p.owner !== flooder);
  const [qa, qb, da, db] = [answered(othersQuiet), afterAnswer(othersQuiet), answered(during), afterAnswer(during)];
  console.log(
    `    B, C, D split: sent → intake's 202 quiet p50 ${ms(qa.p50)} max ${ms(qa.max)}, flood p50 ${ms(da.p50)} max ${ms(da.max)};  202 → PR quiet p50 ${ms(qb.p50)} max ${ms(qb.max)}, flood p50 ${ms(db.p50)} max ${ms(db.max)}`,
  );
  const staged = (probes: Probe[], stage: Stage) =>
    summarize(probes.filter((p) => p.stages).map((p) => p.stages![stage]));
  console.log(
    `    B, C, D by stage (from the job hashes; n quiet ${othersQuiet.filter((p) => p.stages).length}, flood ${during.filter((p) => p.stages).length}), p50 / max:`,
  );
  for (const stage of STAGES) {
    const [sq, sf] = [staged(othersQuiet, stage), staged(during, stage)];
    console.log(
      `      ${stage.padEnd(14)} quiet ${ms(sq.p50).padStart(9)} / ${ms(sq.max).padStart(9)}   flood ${ms(sf.p50).padStart(9)} / ${ms(sf.max).padStart(9)}`,
    );
  }

  const prWrites = (calls: ObservedCall[]) =>
    calls.filter(
      (c) =>
        c.status < 300 &&
        /^(POST \/repos\/\{owner\}\/\{repo\}\/pulls|PATCH \/repos\/\{owner\}\/\{repo\}\/pulls\/\{n\})$/.test(
          `${c.route}`,
        ),
    ).length;
  const quietPrs = prWrites(quietCalls);
  const floodPrs = prWrites(floodCalls);
  console.log(
    `GitHub calls by Escalator per PR written (opened or updated): quiet ${(quietCalls.length / Math.max(1, quietPrs)).toFixed(1)} (${quietCalls.length} calls, ${quietPrs} PR writes); flood to drained ${(floodCalls.length / Math.max(1, floodPrs)).toFixed(1)} (${floodCalls.length} calls, ${floodPrs} PR writes)`,
  );
  const routes = new Map<string, { quiet: number; flood: number; notModified: number }>();
  for (const [calls, key] of [
    [quietCalls, 'quiet'],
    [floodCalls, 'flood'],
  ] as const)
    for (const call of calls) {
      const row = routes.get(call.route) ?? { quiet: 0, flood: 0, notModified: 0 };
      row[key]++;
      if (call.status === 304) row.notModified++;
      routes.set(call.route, row);
    }
  console.log(
    `  ${'route'.padEnd(62)} ${'quiet/PR'.padStart(9)} ${'flood/PR'.padStart(9)} ${'calls'.padStart(7)} ${'304'.padStart(6)}`,
  );
  for (const [route, row] of [...routes].sort((a, b) => b[1].quiet + b[1].flood - (a[1].quiet + a[1].flood)))
    console.log(
      `  ${route.padEnd(62)} ${(row.quiet / Math.max(1, quietPrs)).toFixed(2).padStart(9)} ${(row.flood / Math.max(1, floodPrs)).toFixed(2).padStart(9)} ${String(row.quiet + row.flood).padStart(7)} ${String(row.notModified).padStart(6)}`,
    );
  const all = [...quietCalls, ...floodCalls];
  const gets = all.filter((c) => c.method === 'GET');
  const notModified = gets.filter((c) => c.status === 304).length;
  console.log(
    `  304 share of GETs: ${((100 * notModified) / Math.max(1, gets.length)).toFixed(1)}% (${notModified} of ${gets.length}); quiet ${share(quietCalls)}, flood ${share(floodCalls)}`,
  );
  console.log(
    `  writes per installation, and the busiest 60 s of writes (GitHub's limit 80, Escalator's budget ${WRITES_PER_MINUTE}):`,
  );
  for (const owner of fixture.owners) {
    const writes = all.filter((c) => c.account === owner && c.method !== 'GET' && c.route !== 'POST /graphql (query)');
    console.log(
      `    ${label.get(owner)!.padEnd(22)} ${String(all.filter((c) => c.account === owner).length).padStart(6)} calls, ${String(writes.length).padStart(5)} writes, busiest minute ${busiestMinute(writes.map((c) => c.at))}`,
    );
  }

  console.log(`coalescing: ${label.get(flooder)}, ${floodSent} events on ${floodTargets.length} images`);
  let floodCommits = 0;
  let floodPulls = 0;
  for (const repo of new Set(floodTargets.map((t) => t.repo))) {
    floodCommits += observer.writes.get(repo)?.bumpCommits ?? 0;
    floodPulls += perRepo.get(repo)?.pulls ?? 0;
  }
  console.log(
    `  → ${floodCommits} bump commits (${(floodSent / Math.max(1, floodCommits)).toFixed(0)} events each, ${(floodCommits / floodTargets.length).toFixed(1)} per image), ${floodPulls} PRs in their repositories`,
  );
  console.log(
    `  last flood event → every PR at its newest tag: ${missing.length === 0 ? ms(outcomeAt - (burstStart + SECONDS * 1000)) : `NOT REACHED (${missing.length} behind)`};  first flood event → every queue empty: ${drained.drained ? ms(drainedAt - burstStart) : 'NOT DRAINED'}`,
  );
  for (const line of drained.timeline) console.log(`    ${line}`);
  console.log(
    `  failed jobs ${JSON.stringify(drained.failed)}${drained.failedReasons.length > 0 ? `: ${drained.failedReasons.slice(0, 4).join(' | ')}` : ''}`,
  );
  if (Object.keys(drained.undelivered).length > 0)
    console.log(`  webhooks never delivered: ${JSON.stringify(drained.undelivered)}`);

  const intake = summarize([...result.latencies.ci, ...result.latencies.distribution]);
  console.log('intake of the flood (timed in the sender process, which does nothing else)');
  console.log(
    `  sent ${result.sent} in ${((result.lastSentAt - burstStart) / 1000).toFixed(1)} s; accepted (202) ${result.accepted.length}; not accepted ${failed + quietFailed}${failed > 0 ? ` ${JSON.stringify(result.failures)}` : ''}; answer p50 ${ms(intake.p50)}   p99 ${ms(intake.p99)}   max ${ms(intake.max)}`,
  );
  console.log(
    `  sends late against the schedule p50 ${ms(result.lateness.p50)}, p99 ${ms(result.lateness.p99)}, max ${ms(result.lateness.max)} (single events are timed from their scheduled moment)`,
  );
  for (const peak of memory.peaks())
    console.log(
      `  peak ${peak.name.padEnd(9)} RSS ${peak.rssMb.toFixed(0)} MB at +${(peak.at / 1000).toFixed(0)} s, heapUsed ${peak.heapMb.toFixed(0)} MB${peak.name === 'bench' ? ' (simulator + driver)' : ''}`,
    );
  console.log('nothing lost');
  console.log(
    `  ${failed + quietFailed === 0 ? 'ok  ' : 'NOTE'} events not answered 202: ${failed + quietFailed}${failed > 0 ? ` ${JSON.stringify(result.failures)}` : ''} (an event without an answer may have been taken: its version is allowed in the overlay check)`,
  );
  console.log(
    `  ${wrong.length === 0 ? 'ok  ' : 'FAIL'} every image's dev overlay (open bump PR, else main) equals, byte for byte, the overlay at its newest accepted tag — ${targets.length} checked, ${wrong.length} wrong`,
  );
  for (const line of wrong.slice(0, 20)) console.log(`         ✗ ${line}`);
  if (missing.length > 0) {
    console.log(`  FAIL ${missing.length} images whose PR title never named their newest accepted tag:`);
    for (const t of missing.slice(0, 20))
      console.log(
        `         ✗ ${t.owner}/${t.repo}/${t.app}: newest accepted ${tagOf(accepted.get(t.image) ?? 0)}, highest title seen ${tagOf(observer.highestShown(t.repo, `escalator/dev/${t.app}`))}; open PR now ${openTitle.get(t.image) ?? 'none'}`,
      );
  }
  // Exit 1 only for what Escalator accepted and lost, or did not finish; refusals are printed above.
  if (wrong.length > 0 || missing.length > 0 || !drained.drained) exitCode = 1;
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

function share(calls: ObservedCall[]): string {
  const gets = calls.filter((c) => c.method === 'GET');
  return `${((100 * gets.filter((c) => c.status === 304).length) / Math.max(1, gets.length)).toFixed(1)}%`;
}

/** The most writes within any 60 s window, and when that window began (s since the run's start). */
function busiestMinute(times: number[]): string {
  let best = 0;
  let bestAt = 0;
  let start = 0;
  for (let end = 0; end < times.length; end++) {
    while (times[end]! - times[start]! >= 60_000) start++;
    if (end - start + 1 > best) {
      best = end - start + 1;
      bestAt = times[start]!;
    }
  }
  return best === 0 ? '0' : `${best} (from +${((bestAt - startedAt) / 1000).toFixed(0)} s)`;
}
