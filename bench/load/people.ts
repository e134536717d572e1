/**
 * People's part of the soak's mix, through the sandbox control API (what `git push` and the merge
 * button do): pushes to pull requests of their own, each of which makes GitHub send a signed
 * `pull_request.synchronize` and Escalator render and post the diff, and merges of Escalator's
 * pull requests (bump PRs, so promotion PRs open; promotion PRs, so staging moves).
 *
 * Actions run at most `concurrency` at a time; when the simulator falls behind and `maxBacklog`
 * actions wait, a new one is dropped and counted (the rate stays the rate that was offered).
 */
import type { SandboxClient } from '@escalator/github-sandbox';
import { pick } from '../chaos/driver.js';
import type { WebhookLog } from '../chaos/driver.js';
import { settingsPath, settingsText, type LoadFixture } from './fixture.js';

export interface PeoplePull {
  repo: string;
  app: string;
  number: number;
  branch: string;
  revision: number;
  /** Every push to it: head SHA and when the push returned. */
  pushes: Array<{ sha: string; at: number }>;
}

export interface PeopleStats {
  updates: number;
  mergedBump: number;
  mergedPromotion: number;
  /** Merges refused because Escalator moved the head meanwhile, or the PR was closed. */
  raced: number;
  /** Nothing open to merge at that moment. */
  nothingToMerge: number;
  dropped: number;
  errors: string[];
  /** Milliseconds each action waited for its turn. */
  waitedMs: number[];
  /** Milliseconds each action took in the simulator. */
  tookMs: { update: number[]; merge: number[] };
}

export class People {
  readonly pulls: PeoplePull[] = [];
  readonly stats: PeopleStats = {
    updates: 0,
    mergedBump: 0,
    mergedPromotion: 0,
    raced: 0,
    nothingToMerge: 0,
    dropped: 0,
    errors: [],
    waitedMs: [],
    tookMs: { update: [], merge: [] },
  };
  private readonly waiting: Array<{ run: () => Promise<void>; since: number }> = [];
  private active = 0;
  private idleWaiters: Array<() => void> = [];

  constructor(
    private readonly client: SandboxClient,
    private readonly webhooks: WebhookLog,
    private readonly fixture: LoadFixture,
    private readonly random: () => number,
    private readonly limits = { concurrency: 2, maxBacklog: 20 },
  ) {}

  /** One open pull request per repository, changing the first app's ConfigMap. */
  async openPulls(): Promise<void> {
    const app = this.fixture.apps[0] as string;
    for (const repo of this.fixture.repos) {
      const branch = `people/${repo}`;
      const full = `${this.fixture.owner}/${repo}`;
      const { sha } = await this.client.commit(full, {
        branch,
        files: { [settingsPath(app)]: settingsText(app, 1) },
        message: 'Tune settings, revision 1',
      });
      const pull = await this.client.openPull(full, {
        title: `Tune ${app} settings`,
        head: branch,
        body: 'Opened by the soak run.',
      });
      this.pulls.push({ repo, app, number: pull.number, branch, revision: 1, pushes: [{ sha, at: Date.now() }] });
    }
  }

  /** Queue a push to a random person's pull request. */
  update(): void {
    this.enqueue(async () => {
      const pull = pick(this.random, this.pulls);
      const revision = pull.revision + 1;
      const started = Date.now();
      const { sha } = await this.client.commit(`${this.fixture.owner}/${pull.repo}`, {
        branch: pull.branch,
        files: { [settingsPath(pull.app)]: settingsText(pull.app, revision) },
        message: `Tune settings, revision ${revision}`,
      });
      pull.revision = revision;
      pull.pushes.push({ sha, at: Date.now() });
      this.stats.updates++;
      this.stats.tookMs.update.push(Date.now() - started);
    });
  }

  /** Queue a merge of a random open Escalator PR (bump or promotion), naming the head last seen. */
  merge(): void {
    this.enqueue(async () => {
      const open = [...this.webhooks.pulls.values()].filter(
        (pull) => pull.state === 'open' && pull.ref.startsWith('escalator/'),
      );
      if (open.length === 0) {
        this.stats.nothingToMerge++;
        return;
      }
      const pull = pick(this.random, open);
      const started = Date.now();
      try {
        await this.client.mergePull(`${this.fixture.owner}/${pull.repo}`, pull.number, { sha: pull.sha });
        pull.state = 'closed';
        if (pull.ref.startsWith('escalator/promote/')) this.stats.mergedPromotion++;
        else this.stats.mergedBump++;
      } catch (error) {
        const status = (error as { status?: number }).status;
        if (status === 405 || status === 409) this.stats.raced++;
        else throw error;
      } finally {
        this.stats.tookMs.merge.push(Date.now() - started);
      }
    });
  }

  /** Resolves when no action waits or runs. */
  idle(): Promise<void> {
    if (this.active === 0 && this.waiting.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private enqueue(run: () => Promise<void>): void {
    if (this.waiting.length >= this.limits.maxBacklog) {
      this.stats.dropped++;
      return;
    }
    this.waiting.push({ run, since: Date.now() });
    this.next();
  }

  private next(): void {
    while (this.active < this.limits.concurrency && this.waiting.length > 0) {
      const action = this.waiting.shift()!;
      this.active++;
      this.stats.waitedMs.push(Date.now() - action.since);
      void action
        .run()
        .catch((error: Error) => {
          this.stats.errors.push(error.message);
        })
        .finally(() => {
          this.active--;
          this.next();
          if (this.active === 0 && this.waiting.length === 0)
            for (const resolve of this.idleWaiters.splice(0)) resolve();
        });
    }
  }
}
