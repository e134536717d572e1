/**
 * The invariants checked once Escalator has drained, read from what GitHub (the sandbox) holds
 * through its REST API, and from what the Argo CD receiver got:
 * 1. outcome: every image's dev overlay (default branch, or the open bump PR) is at the highest
 *    tag accepted for it, byte for byte
 * 2. promotion: staging (default branch, or the open promotion PR) runs what dev runs
 * 3. no duplicate PR: at most one open PR per branch; no two PRs of one branch with the same final
 *    tree, nor (Escalator's branches) with the same title, i.e. the same change
 * 4. no duplicate commit: within each PR, no two commits with the same tree
 * 5. no lost update: each default branch holds exactly the files a fault-free run with the same
 *    events and merges produces, byte for byte (computed, not re-run: the seed files, the expected
 *    overlays, the notes people merged, and staging as the last merged promotion left it)
 * 6. relay: every push to a default branch was relayed to the receiver, by itself or folded into
 *    a later push of the same branch (coalescing); no delivery id reached the receiver twice
 * (bench/chaos.ts adds: every webhook delivery reached Escalator, and the queues drained.)
 */
import type { Octokit } from '@octokit/rest';
import type { TestAgent } from '../../test/relay/support/agents.js';
import { summarize } from '../support/stats.js';
import type { UserPull, WebhookLog } from './driver.js';
import {
  apps,
  imageOf,
  initialVersion,
  overlayPath,
  overlayText,
  owner,
  repoFiles,
  repos,
  tagOf,
  type App,
  type Repo,
} from './fixture.js';

export interface Check {
  name: string;
  /** How many things were checked. */
  checked: number;
  violations: string[];
  /** Facts worth printing that are not violations. */
  notes: string[];
}

type Pull = Awaited<ReturnType<Octokit['rest']['pulls']['list']>>['data'][number];

interface RepoState {
  repo: Repo;
  pulls: Pull[];
  /** Tree of each commit of each PR, oldest first. */
  trees: Map<number, string[]>;
  /** path → content on the default branch. */
  main: Map<string, string>;
}

async function readFile(user: Octokit, repo: Repo, path: string, ref: string): Promise<string | null> {
  try {
    const { data } = await user.rest.repos.getContent({ owner, repo, path, ref });
    if (Array.isArray(data) || data.type !== 'file') return null;
    return Buffer.from(data.content, 'base64').toString('utf8');
  } catch (error) {
    if ((error as { status?: number }).status === 404) return null;
    throw error;
  }
}

async function loadRepo(user: Octokit, repo: Repo): Promise<RepoState> {
  const pulls = await user.paginate(user.rest.pulls.list, { owner, repo, state: 'all', per_page: 100 });
  const trees = new Map<number, string[]>();
  for (const pull of pulls) {
    const commits = await user.paginate(user.rest.pulls.listCommits, {
      owner,
      repo,
      pull_number: pull.number,
      per_page: 100,
    });
    trees.set(
      pull.number,
      commits.map((commit) => commit.commit.tree.sha),
    );
  }
  const head = (await user.rest.git.getRef({ owner, repo, ref: 'heads/main' })).data.object.sha;
  const commit = (await user.rest.git.getCommit({ owner, repo, commit_sha: head })).data;
  const tree = (await user.rest.git.getTree({ owner, repo, tree_sha: commit.tree.sha, recursive: '1' })).data;
  const main = new Map<string, string>();
  for (const entry of tree.tree) {
    if (entry.type !== 'blob' || !entry.path || !entry.sha) continue;
    const blob = (await user.rest.git.getBlob({ owner, repo, file_sha: entry.sha })).data;
    main.set(entry.path, Buffer.from(blob.content, 'base64').toString('utf8'));
  }
  return { repo, pulls, trees, main };
}

const openOn = (state: RepoState, branch: string): Pull | undefined =>
  state.pulls.find((pull) => pull.state === 'open' && pull.head.ref === branch);

function firstDifference(actual: string, expected: string): string {
  const a = actual.split('\n');
  const e = expected.split('\n');
  for (let i = 0; i < Math.max(a.length, e.length); i++) {
    if (a[i] !== e[i])
      return `line ${i + 1}: ${JSON.stringify(a[i] ?? '(end)')} instead of ${JSON.stringify(e[i] ?? '(end)')}`;
  }
  return 'differs';
}

export interface InvariantInput {
  user: Octokit;
  /** Highest version accepted (202) per image. */
  acceptedVersion: ReadonlyMap<string, number>;
  mergedNotes: readonly UserPull[];
  webhooks: WebhookLog;
  receiver: TestAgent;
}

export async function checkInvariants(input: InvariantInput): Promise<Check[]> {
  const states: RepoState[] = [];
  for (const repo of repos) states.push(await loadRepo(input.user, repo));
  const expectedTag = (repo: Repo, app: App) => tagOf(input.acceptedVersion.get(imageOf(repo, app)) ?? initialVersion);

  const outcome: Check = {
    name: 'every accepted event produced its outcome (dev at the highest accepted tag)',
    checked: 0,
    violations: [],
    notes: [],
  };
  const promotion: Check = {
    name: 'promotion follows dev (staging, or its open promotion PR, runs what dev runs)',
    checked: 0,
    violations: [],
    notes: [],
  };
  for (const state of states) {
    for (const app of apps) {
      const image = imageOf(state.repo, app);
      const tag = expectedTag(state.repo, app);
      const bump = openOn(state, `escalator/dev/${app}`);
      const where = bump ? `open PR #${bump.number}` : 'main';
      const dev = bump
        ? await readFile(input.user, state.repo, overlayPath(app, 'dev'), bump.head.sha)
        : (state.main.get(overlayPath(app, 'dev')) ?? null);
      outcome.checked++;
      if (bump)
        outcome.notes.push(`${state.repo}/${app}: bump PR #${bump.number} is still open (auto-merge did not happen)`);
      if (dev !== overlayText(image, tag))
        outcome.violations.push(
          `${state.repo}/${app}: dev overlay on ${where} ${dev === null ? 'is missing' : `is not at ${tag}: ${firstDifference(dev, overlayText(image, tag))}`}`,
        );

      const promote = openOn(state, `escalator/promote/staging/${app}`);
      const staging = promote
        ? await readFile(input.user, state.repo, overlayPath(app, 'staging'), promote.head.sha)
        : (state.main.get(overlayPath(app, 'staging')) ?? null);
      promotion.checked++;
      if (bump) continue; // dev itself has not landed: nothing to compare staging with
      if (staging !== overlayText(image, tag)) {
        promotion.violations.push(
          `${state.repo}/${app}: staging on ${promote ? `open PR #${promote.number}` : 'main'} ${staging === null ? 'is missing' : `does not run dev's ${tag}: ${firstDifference(staging, overlayText(image, tag))}`}`,
        );
      }
    }
  }

  const duplicatePr: Check = {
    name: 'no duplicate PR (one open per branch; no two with the same final tree or the same change)',
    checked: 0,
    violations: [],
    notes: [],
  };
  const duplicateCommit: Check = {
    name: 'no duplicate commit (no two commits of a PR with the same tree)',
    checked: 0,
    violations: [],
    notes: [],
  };
  for (const state of states) {
    const byBranch = new Map<string, Pull[]>();
    for (const pull of state.pulls) byBranch.set(pull.head.ref, [...(byBranch.get(pull.head.ref) ?? []), pull]);
    for (const [branch, pulls] of byBranch) {
      duplicatePr.checked += pulls.length;
      const open = pulls.filter((pull) => pull.state === 'open');
      if (open.length > 1)
        duplicatePr.violations.push(
          `${state.repo}: ${open.length} open PRs on ${branch}: ${open.map((p) => `#${p.number}`).join(', ')}`,
        );
      const seenTree = new Map<string, number>();
      const seenTitle = new Map<string, number>();
      for (const pull of pulls) {
        const tree = state.trees.get(pull.number)?.at(-1);
        const twin = tree ? seenTree.get(tree) : undefined;
        if (twin !== undefined)
          duplicatePr.violations.push(
            `${state.repo}: PRs #${twin} and #${pull.number} on ${branch} end at the same tree ${tree?.slice(0, 7)}`,
          );
        if (tree) seenTree.set(tree, pull.number);
        const same = branch.startsWith('escalator/') ? seenTitle.get(pull.title) : undefined;
        if (same !== undefined)
          duplicatePr.violations.push(
            `${state.repo}: PRs #${same} and #${pull.number} on ${branch} carry the same change "${pull.title}"`,
          );
        seenTitle.set(pull.title, pull.number);
      }
    }
    for (const pull of state.pulls) {
      const trees = state.trees.get(pull.number) ?? [];
      duplicateCommit.checked += trees.length;
      const seen = new Set<string>();
      for (const tree of trees) {
        if (seen.has(tree))
          duplicateCommit.violations.push(
            `${state.repo}: PR #${pull.number} (${pull.head.ref}) has two commits with tree ${tree.slice(0, 7)}`,
          );
        seen.add(tree);
      }
    }
  }

  const lost: Check = {
    name: 'no lost update (default branches equal a fault-free run, byte for byte)',
    checked: 0,
    violations: [],
    notes: [],
  };
  for (const state of states) {
    const expected = new Map<string, string | undefined>(Object.entries(repoFiles(state.repo)));
    for (const app of apps) {
      const bump = openOn(state, `escalator/dev/${app}`);
      // With the bump PR still open, main's dev overlay is wherever the last merge left it.
      expected.set(
        overlayPath(app, 'dev'),
        bump ? undefined : overlayText(imageOf(state.repo, app), expectedTag(state.repo, app)),
      );
      const merged = state.pulls
        .filter((pull) => pull.head.ref === `escalator/promote/staging/${app}` && pull.merged_at)
        .sort((a, b) => Date.parse(a.merged_at as string) - Date.parse(b.merged_at as string) || a.number - b.number)
        .at(-1);
      if (merged)
        expected.set(
          overlayPath(app, 'staging'),
          (await readFile(input.user, state.repo, overlayPath(app, 'staging'), merged.head.sha)) ??
            '(missing at the merged head)',
        );
    }
    for (const note of input.mergedNotes.filter((pull) => pull.repo === state.repo))
      expected.set(note.path, note.content);
    for (const [path, content] of expected) {
      lost.checked++;
      const actual = state.main.get(path);
      if (content === undefined) continue;
      if (actual === undefined) lost.violations.push(`${state.repo}: ${path} is missing from main`);
      else if (actual !== content)
        lost.violations.push(`${state.repo}: ${path} on main: ${firstDifference(actual, content)}`);
    }
    for (const path of state.main.keys())
      if (!expected.has(path)) lost.violations.push(`${state.repo}: unexpected file ${path} on main`);
  }

  return [outcome, promotion, duplicatePr, duplicateCommit, lost, checkRelay(input)];
}

interface PushBody {
  ref?: string;
  after?: string;
  repository?: { full_name?: string };
}

function checkRelay(input: InvariantInput): Check {
  const check: Check = {
    name: 'relay (every push to a default branch relayed, each delivery id at most once)',
    checked: 0,
    violations: [],
    notes: [],
  };
  const okGuids = new Set(input.webhooks.attempts.filter((a) => a.ok).map((a) => a.guid));
  const firstOkAt = new Map<string, number>();
  for (const attempt of input.webhooks.attempts)
    if (attempt.ok && !firstOkAt.has(attempt.guid)) firstOkAt.set(attempt.guid, attempt.endedAt);
  const pushes = input.webhooks.attempts.filter(
    (a) => a.event === 'push' && !a.redelivery && (a.payload as PushBody).ref === 'refs/heads/main',
  );
  const positions = new Map<string, Map<string, number>>();
  for (const push of pushes) {
    const body = push.payload as PushBody;
    const repo = body.repository?.full_name ?? '?';
    const sequence = positions.get(repo) ?? new Map<string, number>();
    sequence.set(body.after ?? '?', sequence.size);
    positions.set(repo, sequence);
  }
  const received = input.receiver.requests.map((request) => {
    let body: PushBody = {};
    try {
      body = JSON.parse(request.body.toString('utf8')) as PushBody;
    } catch {
      // counted as rejected below
    }
    return {
      request,
      body,
      at: performance.timeOrigin + request.at,
      delivery: String(request.headers['x-github-delivery'] ?? ''),
    };
  });
  const rejected = received.filter((r) => r.request.verdict !== 'accepted');
  for (const r of rejected)
    check.violations.push(`the receiver refused delivery ${r.delivery}: HTTP ${r.request.status} ${r.request.verdict}`);
  const accepted = received.filter((r) => r.request.verdict === 'accepted');
  const toMain = accepted.filter((r) => r.body.ref === 'refs/heads/main');

  let direct = 0;
  let folded = 0;
  let unreached = 0;
  const latencies: number[] = [];
  for (const push of pushes) {
    check.checked++;
    const body = push.payload as PushBody;
    const repo = body.repository?.full_name ?? '?';
    const sequence = positions.get(repo) as Map<string, number>;
    const position = sequence.get(body.after ?? '?') ?? 0;
    const label = `${repo} push ${body.after?.slice(0, 7)} (delivery ${push.guid.slice(0, 8)})`;
    // A push that never reached Escalator is a violation of the webhook check (bench/chaos.ts);
    // here it counts as relayed when a later push of the branch reached the receiver.
    if (!okGuids.has(push.guid)) unreached++;
    const itself = toMain.find((r) => r.body.repository?.full_name === repo && r.body.after === body.after);
    if (itself) {
      direct++;
      const from = firstOkAt.get(push.guid);
      if (from !== undefined) latencies.push(Math.max(0, itself.at - from));
      continue;
    }
    const later = toMain.find(
      (r) => r.body.repository?.full_name === repo && (sequence.get(r.body.after ?? '') ?? -1) > position,
    );
    if (later) folded++;
    else check.violations.push(`${label} was not relayed: the receiver got neither it nor a later push of main`);
  }
  const byDelivery = new Map<string, number>();
  for (const r of accepted) byDelivery.set(r.delivery, (byDelivery.get(r.delivery) ?? 0) + 1);
  for (const [delivery, count] of byDelivery)
    if (count > 1) check.violations.push(`delivery ${delivery} reached the receiver ${count} times`);
  const s = summarize(latencies);
  check.notes.push(
    `${pushes.length} pushes to main: ${direct} relayed themselves, ${folded} folded into a later push (coalescing)${unreached ? `, ${unreached} of them never reached Escalator` : ''}; ${accepted.length} relayed requests accepted in all (every branch), ${byDelivery.size} distinct delivery ids`,
  );
  if (latencies.length > 0)
    check.notes.push(
      `webhook accepted → receiver, pushes relayed themselves: p50 ${Math.round(s.p50)} ms, p99 ${Math.round(s.p99)} ms, max ${Math.round(s.max)} ms`,
    );
  return check;
}
