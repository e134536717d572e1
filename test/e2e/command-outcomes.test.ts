import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { chainConfig, overlays, seedRepo } from '../support/environments.js';
import { eventually, readFile, redisUrl, startStack, type Stack } from '../support/stack.js';

/**
 * Every command ends in something a person can see, and says only what really happens: a
 * promotion that cannot be made is answered with the reason, a hold opens nothing, the plan lists
 * only promotions that would change something, `--now` skips a soak on the record.
 */
const owner = 'developer';
const digest = `sha256:${'0f'.repeat(32)}`;
const hello = (tag: string) => `images:\n  - name: ghcr.io/example/hello\n    newTag: ${tag}\n`;
const world = (tag: string, pin?: string) =>
  `images:\n  - name: ghcr.io/example/world\n    newTag: ${tag}\n${pin ? `    digest: ${pin}\n` : ''}`;
const config = chainConfig({
  extra: { prod: '    soak: 1h\n' },
  tail: 'images:\n  - name: ghcr.io/example/world\n    policy: semver\n',
});

describe('command outcomes (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  let connection: Redis;
  let promotions: Queue;

  beforeAll(async () => {
    stack = await startStack({ name: 'commands' });
    connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    promotions = new Queue('promote', { connection, prefix: stack.prefix });
  });
  afterAll(async () => {
    await promotions?.close();
    await connection?.quit();
    await stack?.close();
  });

  /** A repository where world runs 2.5.0 in staging by tag while prod pins 2.2.1 by digest (no pinDigest). */
  async function seed(repo: string): Promise<number> {
    await seedRepo(stack, repo, config, {
      ...overlays('hello', { dev: hello('1.1.0'), staging: hello('1.0.0'), prod: hello('1.0.0') }),
      ...overlays('world', { dev: world('2.5.0'), staging: world('2.5.0'), prod: world('2.2.1', digest) }),
    });
    await stack.client.commit(`${owner}/${repo}`, { branch: 'notes', from: 'main', files: { 'NOTES.md': 'n\n' } });
    return (await stack.client.openPull(`${owner}/${repo}`, { title: 'notes', head: 'notes' })).number;
  }
  /** Comment bodies as a reader sees them (Markdown's backslash escapes taken off). */
  const comments = async (repo: string, number: number) =>
    (await stack.user.rest.issues.listComments({ owner, repo, issue_number: number })).data.map((c) =>
      (c.body ?? '').replace(/\\([\\`*_{}[\]()#+\-.!|<>@~"])/g, '$1'),
    );
  const reply = (repo: string, number: number, text: string) =>
    eventually(async () => (await comments(repo, number)).find((body) => body.includes(text)), {
      what: `a reply containing "${text}"`,
      timeoutMs: 60_000,
    });
  const promotionPulls = async (repo: string) =>
    (await stack.user.rest.pulls.list({ owner, repo, state: 'all' })).data.filter((p) =>
      p.head.ref.startsWith('escalator/promote/'),
    );
  const promotionsIdle = () =>
    eventually(
      async () => {
        const counts = await promotions.getJobCounts('active', 'wait', 'prioritized');
        return (counts.active ?? 0) + (counts.wait ?? 0) + (counts.prioritized ?? 0) === 0 ? true : undefined;
      },
      { what: 'the promotion queue to be idle' },
    );

  it('answers a promotion whose file cannot be changed with the reason, and a failing check', async () => {
    const notes = await seed('refused');
    await stack.client.comment(`${owner}/refused`, notes, '/escalator promote prod world');
    const answer = await reply('refused', notes, 'Promotion into **prod** for `world`');
    expect(answer).toContain('no pull request, because Escalator could not change these files safely');
    expect(answer).toContain('apps/world/overlays/prod/kustomization.yaml');
    expect((await promotionPulls('refused')).map((p) => p.head.ref)).not.toContain('escalator/promote/prod/world');
    const head = (await stack.user.rest.git.getRef({ owner, repo: 'refused', ref: 'heads/main' })).data.object.sha;
    const runs = (await stack.user.rest.checks.listForRef({ owner, repo: 'refused', ref: head })).data.check_runs;
    const run = runs.find((r) => r.name === 'escalator/promote escalator/promote/prod/world');
    expect(run?.conclusion).toBe('failure');
    expect(run?.output.summary).toContain('apps/world/overlays/prod/kustomization.yaml');
  });

  it('plans only what would really happen, with gates, and names what cannot be promoted', async () => {
    const notes = await seed('plan');
    await stack.client.comment(`${owner}/plan`, notes, '/escalator plan');
    const answer = await reply('plan', notes, '**Escalator plan**');
    const rows = answer.split('\n').filter((line) => /^\| (staging|prod) \|/.test(line));
    // hello: dev 1.1.0 → staging; staging already runs world 2.5.0 (no row); prod: hello is equal,
    // world is pinned by digest and cannot take a tag without one (refused, not a row).
    expect(rows).toEqual(['| staging | hello | `ghcr.io/example/hello` | `1.0.0` | `1.1.0` | ✅ ready |']);
    expect(answer).toContain('**prod** for `world`: these files cannot be promoted from staging as they are:');
    expect(answer).not.toContain('2.2.1');
    // What the plan calls ready is open: the repository held the difference when it was indexed.
    const open = await eventually(
      async () => (await promotionPulls('plan')).find((p) => p.head.ref === 'escalator/promote/staging/hello'),
      { what: 'the promotion the plan calls ready', timeoutMs: 60_000 },
    );
    expect(open).toMatchObject({ state: 'open', title: 'Promote hello 1.1.0 to staging' });
    await promotionsIdle();
    expect((await promotionPulls('plan')).map((p) => p.head.ref)).toEqual(['escalator/promote/staging/hello']);
  });

  it('opens no promotion on hold, and answers a promotion with its pull request', async () => {
    const notes = await seed('hold');
    // The first index opened the promotion the repository held; a person closes it.
    const first = await eventually(
      async () => (await promotionPulls('hold')).find((p) => p.head.ref === 'escalator/promote/staging/hello'),
      { what: 'the promotion opened by the first index', timeoutMs: 60_000 },
    );
    await promotionsIdle();
    await stack.user.rest.pulls.update({ owner, repo: 'hold', pull_number: first.number, state: 'closed' });
    await stack.client.comment(`${owner}/hold`, notes, '/escalator hold staging');
    await reply('hold', notes, 'is on hold (by @developer)');
    await promotionsIdle();
    expect((await promotionPulls('hold')).filter((p) => p.state === 'open')).toEqual([]);
    await stack.client.comment(`${owner}/hold`, notes, '/escalator promote staging hello');
    const answer = await reply('hold', notes, 'Promotion into **staging** for `hello`: #');
    const number = Number(/: #(\d+) opened/.exec(answer)?.[1]);
    expect(answer).toContain('Promote hello 1.1.0 to staging');
    expect(answer).toContain('⛔ hold: promotion into staging is on hold (@developer)');
    const pulls = await promotionPulls('hold');
    expect(pulls.filter((p) => p.state === 'open').map((p) => p.number)).toEqual([number]);
  });

  it('says when there is nothing to promote, and why a rollback cannot be made', async () => {
    const notes = await seed('nothing');
    await stack.client.comment(`${owner}/nothing`, notes, '/escalator promote staging world');
    expect(await reply('nothing', notes, 'Promotion into **staging** for `world`')).toContain(
      'nothing to change, staging already runs what dev runs',
    );
    await stack.client.comment(`${owner}/nothing`, notes, '/escalator rollback staging hello');
    expect(await reply('nothing', notes, 'Rollback of **staging** for `hello` failed')).toContain(
      'no earlier version of hello in staging is recorded; nothing to roll back to',
    );
    // Only the promotion the repository held when indexed (hello); none for world, nor a rollback.
    expect((await promotionPulls('nothing')).map((p) => p.head.ref)).toEqual(['escalator/promote/staging/hello']);
  });

  it('skips a soak with --now, on the record, for the versions promoted now only', async () => {
    const notes = await seed('now');
    await stack.client.commit(`${owner}/now`, {
      branch: 'main',
      files: { 'apps/hello/overlays/staging/kustomization.yaml': hello('1.1.0') },
    });
    const pending = await eventually(
      async () => (await promotionPulls('now')).find((p) => p.head.ref === 'escalator/promote/prod/hello'),
      { what: 'the prod promotion', timeoutMs: 60_000 },
    );
    const soak = async (sha: string) =>
      (await stack.user.rest.checks.listForRef({ owner, repo: 'now', ref: sha, check_name: 'escalator/soak' })).data
        .check_runs[0];
    await eventually(async () => ((await soak(pending.head.sha))?.status === 'in_progress' ? true : undefined), {
      what: 'the soak to be pending',
    });
    await stack.client.comment(`${owner}/now`, notes, '/escalator promote prod hello --now');
    await reply('now', notes, 'Promotion into **prod** for `hello`: #');
    const run = await eventually(
      async () => {
        const found = await soak(pending.head.sha);
        return found?.conclusion === 'success' ? found : undefined;
      },
      { what: 'the soak check to pass' },
    );
    expect(run.output.summary).toContain('skipped by @developer with /escalator promote prod --now');
    const body = (await stack.user.rest.pulls.get({ owner, repo: 'now', pull_number: pending.number })).data.body;
    expect(body).toContain('✅ soak: skipped by \\@developer with /escalator promote prod \\-\\-now');
    // A newer version soaks again.
    await stack.client.commit(`${owner}/now`, {
      branch: 'main',
      files: { 'apps/hello/overlays/staging/kustomization.yaml': hello('1.2.0') },
    });
    const newer = await eventually(
      async () => {
        const pull = (await stack.user.rest.pulls.get({ owner, repo: 'now', pull_number: pending.number })).data;
        return pull.title.includes('1.2.0') ? pull : undefined;
      },
      { what: 'the promotion to carry 1.2.0', timeoutMs: 60_000 },
    );
    expect(await readFile(stack, owner, 'now', 'apps/hello/overlays/prod/kustomization.yaml', newer.head.sha)).toBe(
      hello('1.2.0'),
    );
    await eventually(async () => ((await soak(newer.head.sha))?.status === 'in_progress' ? true : undefined), {
      what: 'the soak of 1.2.0 to be pending again',
    });
  });

  it('refuses an unknown option, naming the one it takes', async () => {
    const notes = await seed('options');
    await stack.client.comment(`${owner}/options`, notes, '/escalator rollback prod --now');
    expect(await reply('options', notes, 'could not read that command')).toContain(
      '/escalator rollback takes no option ("--now"); only /escalator promote takes --now',
    );
  });
});
