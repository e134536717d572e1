import { Octokit } from '@octokit/rest';
import { Queue, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { REFUSAL_REPLIES_PER_HOUR } from '../../src/jobs/command/process.js';
import { eventually, redisUrl, startStack, waitIndexed, type Stack } from '../support/stack.js';

const owner = 'developer';
const config =
  'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n  - name: prod\n    paths: ["apps/*/overlays/prod"]\n    from: dev\n';
const files = {
  '.github/escalator.yml': config,
  'apps/hello/overlays/dev/kustomization.yaml': 'images:\n  - name: ghcr.io/example/hello\n    newTag: 1.1.0\n',
  'apps/hello/overlays/prod/kustomization.yaml': 'images:\n  - name: ghcr.io/example/hello\n    newTag: 1.0.0\n',
};
const refusal = 'Escalator commands need write access';
const planReply = '**Escalator plan**';

/**
 * People without write access cannot spend the writes kept for people (issue 31): an outsider
 * opens issues and comments `/escalator plan` on each, through the sandbox GitHub's REST API, so
 * every comment reaches the running App as a signed `issue_comment` webhook. What is asserted is
 * what GitHub holds — which comments the App wrote, in which order (comment ids are given in
 * the order GitHub stores them) — and what each command job decided, never a duration.
 */
describe('a flood of commands from people without write access (sandbox GitHub, real Redis)', () => {
  async function setUp(stackEnv: Record<string, string>, repos: string[]) {
    const stack = await startStack(stackEnv, { name: 'refusals' });
    for (const name of repos) {
      await stack.client.createRepo({ name, files });
      await waitIndexed(stack, owner, name);
    }
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue('command', { connection, prefix: stack.prefix });
    return { stack, connection, queue };
  }

  async function outsider(stack: Stack, login: string): Promise<Octokit> {
    const { token } = await stack.client.createUser(login);
    return new Octokit({
      baseUrl: stack.sim.apiUrl,
      auth: token as string,
      log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
    });
  }

  /** Every command job whose comment `author` wrote, once `count` of them exist in the queue. */
  async function jobsOf(queue: Queue, authors: (author: string) => boolean, count: number): Promise<Job[]> {
    return eventually(
      async () => {
        const jobs = (
          await queue.getJobs(['waiting', 'active', 'delayed', 'prioritized', 'completed', 'failed'])
        ).filter((job) => authors((job.data as { author: string }).author));
        return jobs.length >= count ? jobs : undefined;
      },
      { what: `${count} command jobs` },
    );
  }

  /**
   * Every comment the App wrote on these repositories' issues, in the order GitHub stored them.
   * Pull requests are left out: a promotion Escalator opens when it first reads a repository gets
   * its rendered-diff comment, which is not a command reply.
   */
  async function appComments(stack: Stack, repos: string[]) {
    const all = [];
    for (const repo of repos) {
      const issues = await stack.user.paginate(stack.user.rest.issues.listForRepo, { owner, repo, state: 'all' });
      for (const issue of issues.filter((listed) => !listed.pull_request))
        for (const comment of await stack.user.paginate(stack.user.rest.issues.listComments, {
          owner,
          repo,
          issue_number: issue.number,
        }))
          if (comment.user?.type === 'Bot') all.push({ ...comment, repo, issue: issue.number });
    }
    return all.sort((a, b) => a.id - b.id);
  }

  /** Once the writer's plan reply is written: the App's comments written before it. */
  async function untilPlanReply(stack: Stack, repos: string[]) {
    const comments = await eventually(
      async () => {
        const written = await appComments(stack, repos);
        return written.some((c) => c.body?.startsWith(planReply)) ? written : undefined;
      },
      { what: "the writer's plan reply" },
    );
    return comments.slice(
      0,
      comments.findIndex((c) => c.body?.startsWith(planReply)),
    );
  }

  describe('the cap, and one reply per person per repository', () => {
    const repos = ['flood', 'flood-other'];
    let stack: Stack;
    let connection: Redis;
    let queue: Queue;
    beforeAll(async () => {
      ({ stack, connection, queue } = await setUp({}, repos));
    }, 60_000);
    afterAll(async () => {
      await queue?.close();
      await connection?.quit();
      await stack?.close();
    });

    it(`answers at most ${REFUSAL_REPLIES_PER_HOUR} of them an hour, each person once per repository, and a writer at once`, async () => {
      const prefix = `out-${stack.prefix.slice(-8)}`;
      // One outsider opens three issues in one repository and one in another, with a command on each.
      const first = await outsider(stack, `${prefix}-0`);
      for (const [repo, n] of [
        ['flood', 3],
        ['flood-other', 1],
      ] as const)
        for (let i = 0; i < n; i += 1) {
          const { data: issue } = await first.rest.issues.create({ owner, repo, title: `question ${i}` });
          await first.rest.issues.createComment({ owner, repo, issue_number: issue.number, body: '/escalator plan' });
        }
      // Then a crowd of others, one command each, on one issue of the first repository.
      const crowd = REFUSAL_REPLIES_PER_HOUR + 2;
      const { data: shared } = await first.rest.issues.create({ owner, repo: 'flood', title: 'shared' });
      for (let i = 1; i <= crowd; i += 1)
        await (
          await outsider(stack, `${prefix}-${i}`)
        ).rest.issues.createComment({
          owner,
          repo: 'flood',
          issue_number: shared.number,
          body: '/escalator plan',
        });
      const outsiders = await jobsOf(queue, (author) => author.startsWith(prefix), 4 + crowd);
      // The writer asks after the whole flood is queued.
      await stack.user.rest.issues.createComment({
        owner,
        repo: 'flood',
        issue_number: shared.number,
        body: '/escalator plan',
      });
      const before = await untilPlanReply(stack, repos);
      expect(before.every((c) => c.body?.includes(refusal))).toBe(true);
      expect(before.length).toBeLessThanOrEqual(REFUSAL_REPLIES_PER_HOUR);

      // Every outsider job ends, and the refusals written are exactly the cap.
      await eventually(
        async () => {
          const jobs = await Promise.all(outsiders.map((job) => queue.getJob(job.id!)));
          return jobs.every((job) => job?.finishedOn) ? true : undefined;
        },
        { what: 'every outsider command job to end' },
      );
      const done = await Promise.all(outsiders.map((job) => queue.getJob(job.id!)));
      const outcomes = done.map((job) => String(job!.returnvalue));
      const refusals = (await appComments(stack, repos)).filter((c) => c.body?.includes(refusal));
      expect(refusals).toHaveLength(REFUSAL_REPLIES_PER_HOUR);
      // The first outsider heard once per repository: two replies for four commands.
      expect(
        refusals
          .filter((c) => c.body?.startsWith(`@${prefix}-0 `))
          .map((c) => c.repo)
          .sort(),
      ).toEqual(repos);
      expect(outcomes.filter((o) => o === 'ignored: refused in this repository today')).toHaveLength(2);
      // The others beyond the cap were not answered, and each said so in the log and the metrics.
      const capped = outcomes.filter((o) => o.startsWith('ignored: over the cap of replies'));
      expect(capped).toHaveLength(4 + crowd - 2 - REFUSAL_REPLIES_PER_HOUR);
      const metrics = await (await fetch(`${stack.app.url}/metrics`)).text();
      expect(metrics).toContain(`escalator_command_refusals_total{outcome="capped"} ${capped.length}`);
      expect(metrics).toContain(`escalator_command_refusals_total{outcome="replied"} ${REFUSAL_REPLIES_PER_HOUR}`);
      expect(metrics).toContain('escalator_command_refusals_total{outcome="repeated"} 2');
    }, 120_000);
  });

  describe('the writes kept for people', () => {
    const repos = ['budget'];
    let stack: Stack;
    let connection: Redis;
    let queue: Queue;
    // A scaled-down budget: 6 writes a minute, of which routine work may take 5.
    const perMinute = 6;
    const routine = 5;
    beforeAll(async () => {
      ({ stack, connection, queue } = await setUp({ ESCALATOR_GITHUB_WRITES_PER_MINUTE: String(perMinute) }, repos));
    }, 60_000);
    afterAll(async () => {
      await queue?.close();
      await connection?.quit();
      await stack?.close();
    });

    it("refusals are routine work: with the routine share spent by them, a writer's reply is written next", async () => {
      const prefix = `out-${stack.prefix.slice(-8)}`;
      const first = await outsider(stack, `${prefix}-0`);
      const { data: issue } = await first.rest.issues.create({ owner, repo: 'budget', title: 'question' });
      const crowd = perMinute + 1;
      for (let i = 1; i <= crowd; i += 1)
        await (
          await outsider(stack, `${prefix}-${i}`)
        ).rest.issues.createComment({
          owner,
          repo: 'budget',
          issue_number: issue.number,
          body: '/escalator plan',
        });
      await jobsOf(queue, (author) => author.startsWith(prefix), crowd);
      await stack.user.rest.issues.createComment({
        owner,
        repo: 'budget',
        issue_number: issue.number,
        body: '/escalator plan',
      });
      const before = await untilPlanReply(stack, repos);
      // Refusals took at most the routine share of the minute; the writer's reply took the next write.
      expect(before.every((c) => c.body?.includes(refusal))).toBe(true);
      expect(before.length).toBeLessThanOrEqual(routine);
    }, 120_000);
  });
  describe('the queue', () => {
    const repos = ['queue'];
    let stack: Stack;
    let connection: Redis;
    let queue: Queue;
    beforeAll(async () => {
      ({ stack, connection, queue } = await setUp({}, repos));
    }, 60_000);
    afterAll(async () => {
      await queue?.close();
      await connection?.quit();
      await stack?.close();
    });

    it("a writer's command runs ahead of commands from people GitHub does not call collaborators", async () => {
      const prefix = `out-${stack.prefix.slice(-8)}`;
      const first = await outsider(stack, `${prefix}-0`);
      const { data: issue } = await first.rest.issues.create({ owner, repo: 'queue', title: 'question' });
      // A backlog: the workers take nothing while the outsiders and then the writer comment.
      await queue.pause();
      const crowd = 6;
      for (let i = 1; i <= crowd; i += 1)
        await (
          await outsider(stack, `${prefix}-${i}`)
        ).rest.issues.createComment({ owner, repo: 'queue', issue_number: issue.number, body: '/escalator plan' });
      await stack.user.rest.issues.createComment({
        owner,
        repo: 'queue',
        issue_number: issue.number,
        body: '/escalator plan',
      });
      await jobsOf(queue, (author) => author.startsWith(prefix) || author === owner, crowd + 1);
      await queue.resume();
      await untilPlanReply(stack, repos);
      // Every outsider is still answered.
      await eventually(
        async () =>
          (await appComments(stack, repos)).filter((c) => c.body?.includes(refusal)).length === crowd
            ? true
            : undefined,
        { what: 'every refusal' },
      );
      // Two workers take the backlog in priority order: the writer's job is one of the first two
      // started (the other worker may take an outsider's beside it). Which reply GitHub stores
      // first is a race between the two (a refusal is quicker to write than a plan), so the order
      // asserted is the order the jobs started in.
      const ran = await jobsOf(queue, (author) => author.startsWith(prefix) || author === owner, crowd + 1);
      const writer = ran.find((job) => (job.data as { author: string }).author === owner)!;
      const ahead = ran.filter(
        (job) => job !== writer && (job.processedOn ?? Infinity) < (writer.processedOn ?? -Infinity),
      );
      expect(writer.processedOn).toBeTypeOf('number');
      expect(ahead.length).toBeLessThanOrEqual(1);
    }, 120_000);
  });
});
