import { Octokit } from '@octokit/rest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainConfig, overlays, seedRepo } from '../support/environments.js';
import { healthIntake } from '../support/health.js';
import { eventually, redisUrl, startStack, type Stack } from '../support/stack.js';

const owner = 'developer';
const repo = 'dash';
const overlay = (tag: string) => `images:\n  - name: ghcr.io/example/hello\n    newTag: ${tag}\n`;
const config = chainConfig({ head: 'dashboard: true\n' });

/** The dashboard issue end to end: sandbox GitHub (standalone issues, pinIssue), real Redis. */
describe('the dashboard issue (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  let triager: Octokit;
  let triagerLogin: string;
  beforeAll(async () => {
    stack = await startStack({}, { name: 'e2e-dash' });
    triagerLogin = `triager-${stack.prefix.slice(-8)}`;
    const created = await stack.client.createUser(triagerLogin);
    triager = new Octokit({ baseUrl: stack.sim.apiUrl, auth: created.token as string });
    await seedRepo(stack, repo, config, overlays('hello', overlay('1.0.0')), {
      collaborators: { [triagerLogin]: 'triage' },
    });
  }, 60_000);
  afterAll(async () => {
    await stack?.close();
  });

  const dashboard = (what: string, predicate: (body: string) => boolean) =>
    eventually(
      async () => {
        const issue = (await stack.user.rest.issues.listForRepo({ owner, repo, state: 'open' })).data.find(
          (i) => i.title === 'Escalator: environments',
        );
        return issue && predicate(issue.body ?? '') ? issue : undefined;
      },
      { what: `the dashboard to show ${what}`, timeoutMs: 60_000 },
    );
  const replyContaining = (number: number, text: string) =>
    eventually(
      async () =>
        (await stack.user.rest.issues.listComments({ owner, repo, issue_number: number })).data.find((c) =>
          c.body?.includes(text),
        ),
      { what: `a reply containing "${text}"`, timeoutMs: 60_000 },
    );
  const tick = (body: string, label: string) => body.replace(`- [ ] ${label} `, `- [x] ${label} `);

  it('appears pinned and follows a bump, a promotion, a hold and a freeze', { timeout: 180_000 }, async () => {
    const first = await dashboard('the versions', (body) => body.includes('| hello | hello `1.0.0` |'));
    expect(first.user?.login).toMatch(/\[bot\]$/);
    const pinned = await stack.client.deliveries({ event: 'issues' });
    expect(pinned.map((d) => d.action)).toContain('pinned');

    // A new version in dev: dev shows it, and the promotion into staging is listed with its gates.
    await stack.client.commit(`${owner}/${repo}`, {
      branch: 'main',
      files: { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0') },
    });
    const promoted = await dashboard('the promotion', (body) =>
      /#\d+ Promote hello 1\\\.1\\\.0 to staging — ✅ hold/.test(body),
    );
    expect(promoted.number).toBe(first.number);
    expect(promoted.body).toContain('| hello | hello `1.1.0` |');
    expect(promoted.body).toContain('- [ ] promote hello to staging now <!-- escalator:do promote staging hello -->');

    const notes = await stack.client
      .commit(`${owner}/${repo}`, { branch: 'notes', from: 'main', files: { 'NOTES.md': 'notes\n' } })
      .then(() => stack.client.openPull(`${owner}/${repo}`, { title: 'notes', head: 'notes' }));
    await stack.client.comment(`${owner}/${repo}`, notes.number, '/escalator hold prod');
    await dashboard('the hold', (body) => body.includes('- ✋ promotion into **prod** is on hold (by \\@developer)'));
    // Asking again for what is already so renders the same body: no edit reaches GitHub.
    const edits = () =>
      stack.calls.filter(
        (c) => c.route.startsWith('PATCH') && /\/issues\/\{issue_number\}$|\/issues\/\d+$/.test(c.route),
      ).length;
    const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const queue = new Queue('dashboard', { connection, prefix: stack.prefix });
    try {
      const [before, rendered] = [edits(), (await queue.getJobCounts('completed')).completed ?? 0];
      expect(before).toBeGreaterThan(0); // the bump, the promotion and the hold were edits
      await stack.client.comment(`${owner}/${repo}`, notes.number, '/escalator hold prod');
      await eventually(
        async () => {
          const counts = await queue.getJobCounts('completed', 'active', 'delayed', 'waiting');
          const busy = (counts.active ?? 0) + (counts.delayed ?? 0) + (counts.waiting ?? 0);
          return (counts.completed ?? 0) > rendered && busy === 0 ? true : undefined;
        },
        { what: 'the dashboard to render again', timeoutMs: 60_000 },
      );
      expect(edits()).toBe(before);
    } finally {
      await queue.close();
      await connection.quit();
    }
    await stack.client.comment(`${owner}/${repo}`, notes.number, '/escalator freeze staging for 1d release week');
    const frozen = await dashboard(
      'the freeze',
      (body) =>
        body.includes('until /escalator unfreeze') || /staging frozen by \\@developer on .*: release week/.test(body),
    );
    expect(frozen.body).toContain('- [ ] unfreeze staging <!-- escalator:do unfreeze staging -->');
    expect(frozen.body).toContain('⛔ freeze');
  });

  it(
    'acts on a box ticked by a writer and unticks it; someone without write access cannot tick one',
    { timeout: 180_000 },
    async () => {
      const issue = await dashboard('the freeze box', (body) => body.includes('- [ ] unfreeze staging '));
      // Someone with triage access (no write) cannot tick a box at all: GitHub lets only writers
      // (and an issue's author) edit an issue's body, and the dashboard's author is the App. The
      // command job still checks the ticker's permission (test/jobs/command.test.ts).
      const refusedEdit = await triager.rest.issues
        .update({ owner, repo, issue_number: issue.number, body: tick(issue.body!, 'release prod') })
        .then(
          () => undefined,
          (error: { status: number }) => error.status,
        );
      expect(refusedEdit).toBe(403);
      expect((await dashboard('the hold still in force', (body) => body.includes('is on hold'))).body).toContain(
        'promotion into **prod** is on hold',
      );

      // The owner ticks "unfreeze staging": the freeze is lifted, answered on the issue, the box unticked.
      const current = await dashboard('the freeze box', (body) => body.includes('- [ ] unfreeze staging '));
      await stack.user.rest.issues.update({
        owner,
        repo,
        issue_number: issue.number,
        body: tick(current.body!, 'unfreeze staging'),
      });
      await replyContaining(issue.number, 'Freeze lifted on **staging**');
      await dashboard('no freeze', (body) => !body.includes('unfreeze staging') && !body.includes('frozen by'));

      // The owner ticks "promote hello to staging now": the promotion job answers on the issue.
      const again = await dashboard('the promote box', (body) => body.includes('- [ ] promote hello to staging now '));
      await stack.user.rest.issues.update({
        owner,
        repo,
        issue_number: issue.number,
        body: tick(again.body!, 'promote hello to staging now'),
      });
      const answer = await replyContaining(issue.number, 'updated (Promote hello 1\\.1\\.0 to staging)');
      expect(answer.body).toMatch(/^@developer /);
      expect(answer.user?.login).toMatch(/\[bot\]$/);
      await dashboard('every box unticked', (body) => !/- \[x\]/.test(body));
    },
  );

  it('shows an environment the agent reports degraded, and healthy again', { timeout: 120_000 }, async () => {
    const intake = healthIntake(stack);
    try {
      const { data: main } = await stack.user.rest.repos.getBranch({ owner, repo, branch: 'main' });
      const since = new Date(Date.now() - 5 * 60_000).toISOString();
      const source = { agent: 'argocd' as const, object: 'hello-staging' };
      await intake.report(owner, repo, 'staging', 'hello', {
        revision: main.commit.sha,
        sync: 'synced',
        health: 'degraded',
        degradedSince: since,
        lastDegradedAt: since,
        reportedAt: since,
        source,
      });
      await dashboard('staging degraded', (body) => /\*\*degraded\*\* for 5m/.test(body));
      await intake.report(owner, repo, 'staging', 'hello', {
        revision: main.commit.sha,
        sync: 'synced',
        health: 'healthy',
        healthySince: new Date().toISOString(),
        lastDegradedAt: since,
        reportedAt: new Date().toISOString(),
        source,
      });
      await dashboard(
        'staging healthy again',
        (body) => body.includes('healthy for') && !body.includes('**degraded**'),
      );
    } finally {
      await intake.close();
    }
  });
});
