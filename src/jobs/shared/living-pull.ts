import {
  commitOnBranch,
  createBranch,
  createComment,
  createPull,
  ensureLabels,
  ensurePullOpen,
  ensurePullText,
  findOpenPull,
  hasComment,
  loadBotLogin,
  loadBranch,
  loadOpenPull,
  loadPullCommits,
  resetBranch,
  type BranchHead,
  type CommitWriter,
  type PullSummary,
  type RepoId,
} from '../../adapters/github/repo.js';
import type { Octokit } from '../../adapters/github/client.js';
import type { RepoState } from '../../adapters/store/repo-state.js';
import type { LivingRecord } from '../../adapters/store/living.js';
import { ConfigError, ConflictError } from '../../observability/errors.js';
import type { Logger } from '../../observability/logger.js';
import {
  LEFT_ALONE_MARKER,
  livingBranchBase,
  livingBranches,
  parseMarker,
  renderLeftAloneNote,
  renderMarker,
  type ForeignReason,
  type PullMarker,
} from '../../planners/pull-marker.js';

/** The part of a plan the living-PR adapter applies. */
export interface BranchPlan {
  title: string;
  body: string;
  commitMessage: string;
  updates: Array<{ path: string; content: string }>;
  /** Files the commit deletes (configuration promotion: a file X's change removed). */
  deletions?: string[];
}

export interface LivingPullResult<P extends BranchPlan> {
  plan: P;
  /** The open PR after the run (null when none was needed). */
  pull: PullSummary | null;
  commit?: string;
  /** The commit the plan was made against. */
  base: BranchHead;
  /** True when this run opened the pull request. */
  created: boolean;
  /** The branch the pull request is on: the deterministic one, or its `@2`… copy. */
  branch: string;
}

/**
 * Trust in a living pull request. Markers, branch names and git metadata are text anyone with push
 * access can write; what Escalator builds on, edits or merges must be a pull request this App
 * opened whose every commit this App wrote. Two ways to know it:
 * - Redis (the normal path, no GitHub call): the pull request Escalator opened on each branch and
 *   the head commit it last wrote there (the commit and the ref move are one call, recorded right
 *   after; a branch's starting commit before the branch is created). Head equal to that commit
 *   means every commit on the branch is Escalator's: each one was built on a head judged the same
 *   way, or on the default branch.
 * - GitHub (when Redis lost the record, or the head is not the one recorded): the pull request's
 *   author is this App's bot (`<slug>[bot]` from `GET /app`; only the App can open a pull request as
 *   its bot) and every commit of `GET /pulls/{n}/commits` has a signature GitHub verified and is
 *   attributed to the bot as author and committer. GitHub signs the commits an App makes through the
 *   API without a custom author and attributes them to its bot; a person can forge the author email
 *   but not GitHub's verified signature for the bot. One more call per pull request, once: a
 *   positive answer is recorded again, so losing Redis does not churn the living pull requests.
 * A pull request judged foreign stays foreign (noted in Redis, and by Escalator's one comment on it).
 */
export type LivingTrust = { ours: true } | { ours: false; reason: ForeignReason | null };

async function judgePull(
  octokit: Octokit,
  store: RepoState,
  id: RepoId,
  base: string,
  branch: string,
  pull: Pick<PullSummary, 'number' | 'headSha' | 'user'>,
  record: LivingRecord,
): Promise<LivingTrust> {
  if (record.noted.includes(pull.number)) return { ours: false, reason: null };
  const own = record.branches[branch];
  if (own?.pull === pull.number && own.head === pull.headSha) return { ours: true };
  const bot = await loadBotLogin(octokit);
  if (pull.user?.type !== 'Bot' || pull.user.login !== bot)
    return { ours: false, reason: { kind: 'opened-by', login: pull.user?.login ?? '' } };
  const commits = await loadPullCommits(octokit, id, pull.number);
  // GitHub lists at most 250 commits of a pull request; one that long is not a living PR of ours.
  const stranger =
    commits.find((commit) => !wroteIt(commit, bot)) ??
    (commits.length === 0 || commits.length >= 250 || commits.at(-1)?.sha !== pull.headSha
      ? { sha: pull.headSha, author: null }
      : undefined);
  if (stranger) return { ours: false, reason: { kind: 'commit', sha: stranger.sha, login: stranger.author } };
  await store.living.recordLiving(id, base, branch, { pull: pull.number, head: pull.headSha });
  return { ours: true };
}

function wroteIt(writer: CommitWriter, bot: string): boolean {
  return writer.verified && writer.author === bot && writer.committer === bot;
}

/**
 * True when a pull request is one of Escalator's living pull requests, judged as above: the only
 * pull requests whose marker is believed (commands, carried-over images and provenance).
 */
export async function isEscalatorPull(
  input: { octokit: Octokit; store: RepoState; id: RepoId },
  pull: {
    number: number;
    headRef: string;
    headSha: string;
    headRepo: string | null;
    user: { login: string; type: string } | null;
  },
): Promise<boolean> {
  const { id } = input;
  if (pull.headRepo?.toLowerCase() !== `${id.owner}/${id.repo}`.toLowerCase() || !pull.headRef.startsWith('escalator/'))
    return false;
  const base = livingBranchBase(pull.headRef);
  if (!livingBranches(base).includes(pull.headRef)) return false;
  const record = await input.store.living.loadLiving(id, base);
  return (await judgePull(input.octokit, input.store, id, base, pull.headRef, pull, record)).ours;
}

/**
 * One living pull request per deterministic branch, kept current:
 * 1. find the branch to write: the deterministic one, or its `@2`… copy when a branch holds a pull
 *    request Escalator did not write (that one is left alone and told so once, see {@link LivingTrust})
 * 2. read the default branch; let the caller plan against the base (the PR's head when it is
 *    Escalator's own, else the default branch; it loads the files it needs at `base.sha`)
 * 3. commit the plan once, record the commit as Escalator's, move the branch by compare-and-swap
 *    (create, fast-forward only, or reset a leftover branch whose head Escalator wrote)
 * 4. create the PR or update its text only when it differs; add missing labels
 * On a lost compare-and-swap, or a PR merged or closed meanwhile, everything is planned again from
 * fresh state (up to 4 times).
 */
export async function ensureLivingPull<P extends BranchPlan>(input: {
  octokit: Octokit;
  store: RepoState;
  id: RepoId;
  defaultBranch: string;
  branch: string;
  labels: string[];
  log: Logger;
  dryRun?: boolean;
  /** False: only an open pull request is kept current; none is opened (default true). */
  openNew?: boolean;
  /**
   * Read the default branch's head with what it changed, as the index job reads it where an
   * environment promotes configuration: the same request, so GitHub can answer it 304.
   */
  headChanges?: boolean;
  /**
   * `marker` is the open PR's marker as Escalator last wrote it (from Redis; from the body as GitHub
   * holds it only when Redis lost it): what a plan carries over.
   */
  plan: (base: BranchHead, open: PullSummary | null, defaultHead: BranchHead, marker: PullMarker | null) => Promise<P>;
}): Promise<LivingPullResult<P>> {
  const { octokit, store, id, branch, log } = input;
  for (let attempt = 1; ; attempt++) {
    try {
      return await once(attempt);
    } catch (error) {
      if (!(error instanceof ConflictError) || attempt >= 4) throw error;
      log.info({ branch, attempt }, 'Branch moved meanwhile; planning again from fresh state');
    }
  }

  /** The first branch Escalator may write: absent, its own leftover, or holding its own open PR. */
  async function chooseBranch(
    record: LivingRecord,
  ): Promise<{ name: string; head: BranchHead | null; open: PullSummary | null }> {
    const candidates = livingBranches(branch);
    // The branch in use is looked at first: a foreign PR on the deterministic branch that was
    // merged and deleted must not make the next run open a second living PR there.
    const order =
      record.at && record.at !== branch && candidates.includes(record.at)
        ? [record.at, ...candidates.filter((name) => name !== record.at)]
        : candidates;
    for (const name of order) {
      const head = await loadBranch(octokit, id, name);
      if (!head) return { name, head: null, open: null };
      const open = await findOpenPull(octokit, id, name);
      if (!open) {
        // A leftover branch is reset only when Escalator wrote its head: someone's pushed work stays.
        if (
          record.branches[name]?.head === head.sha ||
          (head.writer && wroteIt(head.writer, await loadBotLogin(octokit)))
        )
          return { name, head, open: null };
        log.info({ branch: name }, 'Branch written by someone else, without a pull request; trying the next one');
        continue;
      }
      // GitHub moves a pull request's head a moment after the push: until both agree, the branch
      // may hold a commit the judged head does not (built on, it would be a stranger's). Plan again.
      if (open.headSha !== head.sha)
        throw new ConflictError(`pull request #${open.number} does not point at the head of ${name} yet`);
      const trust = await judgePull(octokit, store, id, branch, name, open, record);
      if (trust.ours) return { name, head, open };
      log.warn(
        { branch: name, pr: open.number, reason: trust.reason?.kind ?? 'noted' },
        'Living pull request not written by Escalator; left alone',
      );
      if (trust.reason && !input.dryRun) await noteOnce(open.number, trust.reason);
    }
    throw new ConfigError(
      `every branch Escalator may use for ${branch} (${candidates.join(', ')}) holds a pull request or commits Escalator did not write; close those pull requests or delete those branches, and the next event opens Escalator's own`,
    );
  }

  /**
   * The open pull request Redis says Escalator opened on the branch in use, at the head it last
   * wrote there: one read of that pull request instead of the branch and the list of pull requests.
   * Its head is where GitHub says the branch is; if the branch moved since (a push GitHub has not
   * moved the pull request to yet), the compare-and-swap of the commit fails and the next attempt
   * reads everything. Null when the record names none or GitHub says otherwise.
   */
  async function recordedPull(
    record: LivingRecord,
  ): Promise<{ name: string; head: BranchHead; open: PullSummary } | null> {
    const name = record.at ?? branch;
    const own = record.branches[name];
    if (own?.pull === undefined || own.head === undefined) return null;
    const open = await loadOpenPull(octokit, id, own.pull, name);
    if (!open || open.headSha !== own.head) return null;
    return { name, head: { sha: open.headSha }, open };
  }

  /** Say once on a pull request that Escalator leaves it alone (Redis remembers; the comment itself after Redis loss). */
  async function noteOnce(number: number, reason: ForeignReason): Promise<void> {
    if (!(await hasComment(octokit, id, number, LEFT_ALONE_MARKER, await loadBotLogin(octokit))))
      await createComment(octokit, id, number, renderLeftAloneNote(reason, branch));
    await store.living.recordNoted(id, branch, number);
  }

  async function once(attempt: number): Promise<LivingPullResult<P>> {
    const record = await store.living.loadLiving(id, branch);
    // Nothing recorded for these branches: Escalator never wrote them, or Redis lost the record.
    // The branch is then taken to be absent, and creating it is the check (a 422 when it exists
    // sends the next attempt through the reads of `chooseBranch`): two GitHub reads fewer per new PR.
    const unknown =
      attempt === 1 &&
      input.openNew !== false &&
      !input.dryRun &&
      record.at === undefined &&
      record.noted.length === 0 &&
      Object.keys(record.branches).length === 0;
    const {
      name,
      head: branchHead,
      open,
    } = unknown
      ? { name: branch, head: null, open: null }
      : ((attempt === 1 ? await recordedPull(record) : null) ?? (await chooseBranch(record)));
    // The default branch is read after the PR: a PR merged meanwhile is then either still seen open
    // (its update below finds it merged, and the run plans again) or already in the default branch.
    // Read before it, a merge in between would be planned again on top of the old default branch.
    const defaultHead = await loadBranch(octokit, id, input.defaultBranch, { changes: input.headChanges === true });
    if (!defaultHead)
      throw new ConfigError(`the default branch ${input.defaultBranch} of ${id.owner}/${id.repo} is gone`);
    const base = open && branchHead ? branchHead : defaultHead;
    const own = record.branches[name];
    const marker = open
      ? own?.pull === open.number && own.marker !== undefined
        ? parseMarker(own.marker)
        : parseMarker(open.body)
      : null;
    const plan = await input.plan(base, open, defaultHead, marker);
    const written = parseMarker(plan.body);
    const markerText = written ? renderMarker(written) : '';
    if (input.dryRun || (!open && input.openNew === false))
      return { plan, pull: open, base, created: false, branch: name };
    if (plan.updates.length === 0 && (plan.deletions ?? []).length === 0) {
      if (open) {
        await ensurePullText(octokit, id, open, { title: plan.title, body: plan.body });
        await store.living.recordLiving(id, branch, name, { marker: markerText });
      }
      return {
        plan,
        pull: open ? { ...open, title: plan.title, body: plan.body } : null,
        base,
        created: false,
        branch: name,
      };
    }
    let commit: string;
    if (open && branchHead) {
      commit = await commitOnBranch(
        octokit,
        id,
        name,
        branchHead.sha,
        plan.updates,
        plan.commitMessage,
        plan.deletions,
      );
    } else {
      // A new branch, or a leftover one of a closed PR whose head Escalator wrote, starts at the
      // commit the plan was made against. Recorded first: a crash before the commit leaves a branch
      // at that commit which the next run may reset (nobody's work is on it).
      await store.living.recordLiving(id, branch, name, { head: base.sha });
      if (!branchHead) await createBranch(octokit, id, name, base.sha);
      else await resetBranch(octokit, id, name, base.sha);
      commit = await commitOnBranch(octokit, id, name, base.sha, plan.updates, plan.commitMessage, plan.deletions);
    }
    // A crash before this line leaves a head Escalator wrote but did not record: GitHub signed it
    // for the App's bot, so the next run judges it Escalator's through GitHub (see LivingTrust).
    await store.living.recordLiving(id, branch, name, { head: commit });
    let pull: PullSummary;
    if (open) {
      // A person may merge or close the PR while this run writes it: the PATCH answers its state,
      // or, when the text is unchanged, one read does. Either way a lost race is planned again.
      if (!(await ensurePullText(octokit, id, open, { title: plan.title, body: plan.body })))
        await ensurePullOpen(octokit, id, open.number);
      await store.living.recordLiving(id, branch, name, { marker: markerText });
      pull = { ...open, title: plan.title, body: plan.body };
    } else {
      pull = await createPull(octokit, id, {
        head: name,
        base: input.defaultBranch,
        title: plan.title,
        body: plan.body,
      });
      await store.living.recordLiving(id, branch, name, { head: commit, pull: pull.number, marker: markerText });
    }
    await ensureLabels(octokit, id, pull.number, pull.labels, input.labels);
    log.info({ branch: name, pr: pull.number, commit, files: plan.updates.length }, 'Living pull request updated');
    return {
      plan,
      pull: { ...pull, headSha: commit, labels: [...new Set([...pull.labels, ...input.labels])] },
      commit,
      base,
      created: !open,
      branch: name,
    };
  }
}
