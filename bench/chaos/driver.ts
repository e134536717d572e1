/**
 * The steady mix the chaos run drives: registry events through the CI API, and people working
 * in the repositories (pull requests of their own: open, push, merge; merging promotion PRs).
 * Everything it does is recorded, so the expected end state can be computed from it.
 */
import type { DeliveryRecord, SandboxClient, Simulator } from '@escalator/github-sandbox';
import { sleep } from '../support/stats.js';
import { images, owner, repos, tagOf, type Repo } from './fixture.js';

/** A small seeded PRNG (mulberry32), so a run's choices can be replayed with `--seed`. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function pick<T>(random: () => number, items: readonly T[]): T {
  const item = items[Math.floor(random() * items.length)];
  if (item === undefined) throw new Error('pick() from an empty list');
  return item;
}

/** What happened to the registry events. */
export interface EventStats {
  /** Distinct events (image:tag) sent. */
  sent: number;
  /** Events that got 202 (each counted once). */
  accepted: number;
  /** 503 answers (Redis down), each retried after Retry-After. */
  unavailable: number;
  /** Requests that failed without an answer (web process restarting), each retried on the other web. */
  connectionErrors: number;
  /** Events answered with a status other than 202 or 503: refused, not retried. */
  refused: string[];
  /** Events still not accepted when the run stopped retrying them. */
  gaveUp: string[];
  /** Milliseconds from first send to 202, for events that needed more than one attempt. */
  retriedForMs: number[];
}

/**
 * Registry events: every tick one image gets its next version (`1.n.0`, increasing per image), sent
 * to the web processes in turn. Like a registry, the sender retries 503 after `Retry-After` and
 * retries a connection that failed; nothing refused is lost.
 */
export class EventDriver {
  /** Highest version number sent, per image. */
  readonly sentVersion = new Map<string, number>();
  /** Highest version number accepted (202), per image. */
  readonly acceptedVersion = new Map<string, number>();
  readonly stats: EventStats = {
    sent: 0,
    accepted: 0,
    unavailable: 0,
    connectionErrors: 0,
    refused: [],
    gaveUp: [],
    retriedForMs: [],
  };
  private readonly inFlight = new Set<Promise<void>>();
  private turn = 0;
  private stopRetryingAt = Infinity;

  constructor(
    private readonly webUrls: readonly string[],
    private readonly token: string,
    private readonly random: () => number,
  ) {}

  /** Send the next version of one image (in the background). */
  sendNext(): void {
    const image = pick(this.random, images);
    const version = (this.sentVersion.get(image) ?? 0) + 1;
    this.sentVersion.set(image, version);
    this.stats.sent++;
    const sending = this.send(image, version).finally(() => this.inFlight.delete(sending));
    this.inFlight.add(sending);
  }

  get pending(): number {
    return this.inFlight.size;
  }

  /** Wait for every event to be accepted, or give up on the ones left at `deadline`. */
  async settle(deadline: number): Promise<void> {
    this.stopRetryingAt = deadline;
    while (this.inFlight.size > 0) await Promise.race([...this.inFlight]);
  }

  private async send(image: string, version: number): Promise<void> {
    const reference = `${image}:${tagOf(version)}`;
    const started = Date.now();
    let web = this.turn++;
    for (let attempt = 1; ; attempt++) {
      let wait: number;
      const url = this.webUrls[web % this.webUrls.length] as string;
      try {
        const response = await fetch(`${url}/api/v1/images`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${this.token}` },
          body: JSON.stringify({ image: reference }),
          signal: AbortSignal.timeout(15_000),
        });
        const text = await response.text();
        if (response.status === 202) {
          this.stats.accepted++;
          this.acceptedVersion.set(image, Math.max(this.acceptedVersion.get(image) ?? 0, version));
          if (attempt > 1) this.stats.retriedForMs.push(Date.now() - started);
          return;
        }
        if (response.status !== 503) {
          this.stats.refused.push(`${reference} → HTTP ${response.status} ${text.slice(0, 200)}`);
          return;
        }
        this.stats.unavailable++;
        wait = Math.min(10, Number(response.headers.get('retry-after') ?? 1) || 1) * 1000;
      } catch {
        // No answer: the web process is restarting. A load balancer would try another replica.
        this.stats.connectionErrors++;
        wait = 250;
      }
      web++;
      if (Date.now() + wait > this.stopRetryingAt) {
        this.stats.gaveUp.push(reference);
        return;
      }
      await sleep(wait);
    }
  }
}

/** One delivery attempt the simulator made to Escalator, as recorded by {@link WebhookLog}. */
export interface DeliveryAttempt {
  guid: string;
  event: string;
  action: string | null;
  redelivery: boolean;
  ok: boolean;
  status: string;
  /** When the attempt started (simulator clock, the real clock here). */
  startedAt: number;
  /** When the attempt was answered or failed. */
  endedAt: number;
  payload: Record<string, unknown>;
}

/** Every webhook delivery attempt of the simulator, in order, plus the pull requests it reported. */
export class WebhookLog {
  readonly attempts: DeliveryAttempt[] = [];
  /** Latest payload of every pull request seen in an original `pull_request` delivery. */
  readonly pulls = new Map<
    string,
    { repo: string; number: number; ref: string; sha: string; state: string; merged: boolean }
  >();
  private readonly unsubscribe: () => void;

  constructor(sim: Simulator) {
    this.unsubscribe = sim.context.webhooks.onDelivery((record: DeliveryRecord) => this.add(record));
  }

  close(): void {
    this.unsubscribe();
  }

  /** GUIDs that have no successful attempt yet, with their last attempt's end time. */
  unresolved(): Map<string, number> {
    const last = new Map<string, number>();
    const ok = new Set<string>();
    for (const attempt of this.attempts) {
      if (attempt.ok) ok.add(attempt.guid);
      else last.set(attempt.guid, attempt.endedAt);
    }
    for (const guid of ok) last.delete(guid);
    return last;
  }

  private add(record: DeliveryRecord): void {
    const ok = record.statusCode >= 200 && record.statusCode < 300;
    this.attempts.push({
      guid: record.guid,
      event: record.event,
      action: record.action,
      redelivery: record.redelivery,
      ok,
      status: record.statusCode ? String(record.statusCode) : record.status,
      startedAt: record.deliveredAt.getTime(),
      endedAt: Date.now(),
      payload: record.request.payload,
    });
    // Redeliveries replay old payloads: only originals tell the current state of a pull request.
    if (record.event !== 'pull_request' || record.redelivery) return;
    const payload = record.request.payload as {
      repository?: { name: string };
      pull_request?: { number: number; state: string; merged?: boolean; head: { ref: string; sha: string } };
    };
    const pull = payload.pull_request;
    if (!pull || !payload.repository) return;
    this.pulls.set(`${payload.repository.name}#${pull.number}`, {
      repo: payload.repository.name,
      number: pull.number,
      ref: pull.head.ref,
      sha: pull.head.sha,
      state: pull.state,
      merged: Boolean(pull.merged),
    });
  }
}

/** A person's own pull request: one notes file, rewritten by each push. */
export interface UserPull {
  repo: Repo;
  number: number;
  branch: string;
  path: string;
  content: string;
  commits: number;
}

export interface UserStats {
  opened: number;
  pushed: number;
  merged: number;
  promotionsMerged: number;
  /** Promotion merges refused because Escalator moved the branch meanwhile, or closed the PR. */
  promotionsRaced: number;
  errors: string[];
  /** Actions that took more than 5 s (the simulator is slow on a loaded machine). */
  slow: Array<{ action: string; ms: number }>;
  /** The action running now and since when (to name one that hangs). */
  current?: { action: string; since: number };
}

/**
 * People at work: open a pull request of their own (a notes file), push more commits to it,
 * merge it; and merge Escalator's open promotion PRs (staging), naming the head they reviewed.
 * Only the control API is used (no REST call), so the rate-limit switch is left to Escalator.
 */
export class UserDriver {
  readonly open: UserPull[] = [];
  readonly merged: UserPull[] = [];
  readonly stats: UserStats = {
    opened: 0,
    pushed: 0,
    merged: 0,
    promotionsMerged: 0,
    promotionsRaced: 0,
    errors: [],
    slow: [],
  };
  private counter = 0;

  constructor(
    private readonly client: SandboxClient,
    private readonly webhooks: WebhookLog,
    private readonly random: () => number,
  ) {}

  async step(): Promise<void> {
    const roll = this.random();
    const repo = pick(this.random, repos);
    const mine = this.open.filter((pull) => pull.repo === repo);
    const ready = mine.filter((pull) => pull.commits >= 2);
    let action: [string, () => Promise<void>];
    if (roll < 0.25) action = ['merge a promotion PR', () => this.mergePromotion()];
    else if (mine.length < 2 && roll < 0.5) action = [`open a PR in ${repo}`, () => this.openPull(repo)];
    else if (ready.length > 0 && roll < 0.75) {
      const pull = pick(this.random, ready);
      action = [`merge ${repo}#${pull.number}`, () => this.mergeOwn(pull)];
    } else if (mine.length > 0) {
      const pull = pick(this.random, mine);
      action = [`push to ${repo}#${pull.number}`, () => this.push(pull)];
    } else action = [`open a PR in ${repo}`, () => this.openPull(repo)];
    const since = Date.now();
    this.stats.current = { action: action[0], since };
    try {
      await action[1]();
    } catch (error) {
      this.stats.errors.push(`${action[0]}: ${(error as Error).message}`);
    } finally {
      this.stats.current = undefined;
      if (Date.now() - since > 5_000) this.stats.slow.push({ action: action[0], ms: Date.now() - since });
    }
  }

  private async openPull(repo: Repo): Promise<void> {
    const n = ++this.counter;
    const branch = `notes/${repo}-${n}`;
    const path = `notes/${repo}-${n}.md`;
    const content = `# Note ${n}\n\nrevision 1\n`;
    await this.client.commit(`${owner}/${repo}`, { branch, files: { [path]: content }, message: `Add note ${n}` });
    const pull = await this.client.openPull(`${owner}/${repo}`, {
      title: `Add note ${n}`,
      head: branch,
      body: 'Written by the chaos run.',
    });
    this.open.push({ repo, number: pull.number, branch, path, content, commits: 1 });
    this.stats.opened++;
  }

  private async push(pull: UserPull): Promise<void> {
    const content = `${pull.content.trimEnd().replace(/revision \d+$/, '')}revision ${pull.commits + 1}\n`;
    await this.client.commit(`${owner}/${pull.repo}`, {
      branch: pull.branch,
      files: { [pull.path]: content },
      message: `Revise ${pull.path}`,
    });
    pull.content = content;
    pull.commits++;
    this.stats.pushed++;
  }

  private async mergeOwn(pull: UserPull): Promise<void> {
    await this.client.mergePull(`${owner}/${pull.repo}`, pull.number);
    this.open.splice(this.open.indexOf(pull), 1);
    this.merged.push(pull);
    this.stats.merged++;
  }

  private async mergePromotion(): Promise<void> {
    const candidates = [...this.webhooks.pulls.values()].filter(
      (pull) => pull.state === 'open' && pull.ref.startsWith('escalator/promote/'),
    );
    if (candidates.length === 0) return;
    const pull = pick(this.random, candidates);
    try {
      await this.client.mergePull(`${owner}/${pull.repo}`, pull.number, { sha: pull.sha });
      this.stats.promotionsMerged++;
    } catch (error) {
      const status = (error as { status?: number }).status;
      if (status === 405 || status === 409) this.stats.promotionsRaced++;
      else throw error;
    }
  }
}
