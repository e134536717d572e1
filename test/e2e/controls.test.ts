import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Redis } from 'ioredis';
import { RepoState } from '../../src/adapters/store/repo-state.js';
import { chainConfig, overlays, seedRepo } from '../support/environments.js';
import {
  eventually,
  postImage,
  redisUrl,
  startStack,
  waitIndexed,
  runDelayedNow,
  type Stack,
} from '../support/stack.js';

const owner = 'developer';
const overlay = (tag: string) => `images:\n  - name: ghcr.io/example/hello\n    newTag: ${tag}\n`;
const configOf = (stagingExtra = '') =>
  chainConfig({ environments: ['dev', 'staging'], extra: { staging: `    autoMerge: true\n${stagingExtra}` } });

/**
 * Windows and freezes end to end (sandbox GitHub, real Redis). Time is the jobs' clock
 * (`deps.now`), moved by an offset from the system's; delayed jobs wait real milliseconds, so the
 * window test moves the clock to the opening and runs the re-plan the product scheduled for it at
 * once, instead of waiting five real minutes. The freeze test does the same at the freeze's end, and
 * moves the sandbox GitHub's clock along (its assertion compares GitHub's own merge time).
 */
describe('release controls (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  let offset = 0;
  const simNow = () => Date.now() + offset;
  beforeAll(async () => {
    stack = await startStack({}, { name: 'e2e-controls', now: () => new Date(simNow()) });
  });
  afterAll(async () => {
    await stack?.close();
  });

  async function seed(repo: string, config: string) {
    await seedRepo(stack, repo, config, overlays('hello', overlay('1.0.0'), ['dev', 'staging']));
  }
  const commit = (repo: string, files: Record<string, string>) =>
    stack.client.commit(`${owner}/${repo}`, { branch: 'main', files });
  const promotion = (repo: string) =>
    eventually(
      async () =>
        (await stack.user.rest.pulls.list({ owner, repo, state: 'all' })).data.find(
          (p) => p.head.ref === 'escalator/promote/staging/hello',
        ),
      { what: 'the promotion PR', timeoutMs: 60_000 },
    );
  const checkRun = (
    repo: string,
    sha: string,
    name: string,
    predicate: (run: { status: string; conclusion: string | null; output: { summary?: string | null } }) => boolean,
  ) =>
    eventually(
      async () => {
        const run = (await stack.user.rest.checks.listForRef({ owner, repo, ref: sha, check_name: name })).data
          .check_runs[0];
        return run && predicate(run) ? run : undefined;
      },
      { what: `${name} to change`, timeoutMs: 60_000 },
    );
  const merged = (repo: string, number: number) =>
    eventually(
      async () => {
        const pull = (await stack.user.rest.pulls.get({ owner, repo, pull_number: number })).data;
        return pull.merged_at ? pull : undefined;
      },
      { what: 'the promotion to merge', timeoutMs: 90_000 },
    );
  const replyContaining = (repo: string, number: number, text: string) =>
    eventually(
      async () =>
        (await stack.user.rest.issues.listComments({ owner, repo, issue_number: number })).data.find((c) =>
          c.body?.includes(text),
        ),
      { what: `a reply containing "${text}"`, timeoutMs: 30_000 },
    );
  async function notesPull(repo: string) {
    await stack.client.commit(`${owner}/${repo}`, { branch: 'notes', from: 'main', files: { 'NOTES.md': 'notes\n' } });
    return stack.client.openPull(`${owner}/${repo}`, { title: 'notes', head: 'notes' });
  }

  it(
    'keeps autoMerge from merging outside the allowed window, says when it opens, and merges on time',
    { timeout: 150_000 },
    async () => {
      // Monday 7 December 2026, 08:55 in Berlin: the weekday window opens in five minutes (time
      // enough for a loaded machine to open the promotion first; the test moves the clock there).
      const opening = Date.parse('2026-12-07T08:00:00Z');
      offset = opening - 300_000 - Date.now();
      await seed(
        'window',
        configOf('    windows:\n      allow:\n        - { cron: "0 9 * * 1-5", duration: 8h, zone: Europe/Berlin }\n'),
      );
      await commit('window', { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0') });
      const pull = await promotion('window');
      const pending = await checkRun(
        'window',
        pull.head.sha,
        'escalator/window',
        (run) => run.status === 'in_progress',
      );
      expect(pending.output.summary).toBe(
        'staging takes no automatic merge now: it is outside every allowed window; opens Mon 09:00 Europe/Berlin',
      );
      expect(simNow()).toBeLessThan(opening);
      expect(
        (await stack.user.rest.pulls.get({ owner, repo: 'window', pull_number: pull.number })).data.merged_at,
      ).toBeNull();
      // The re-plan waits in Redis for the opening: move the clock there and run it now.
      await runDelayedNow(stack, 'promote', (job) => job.data.repo === 'window' && job.data.reason === 'window', {
        what: 'the re-plan at the opening',
        before: () => (offset += opening - simNow()),
      });
      const done = await merged('window', pull.number);
      // Merged by the re-plan at the opening, not before it (GitHub stamps whole seconds).
      expect(Date.parse(done.merged_at!) + offset).toBeGreaterThan(opening - 1_000);
      const passed = await checkRun('window', pull.head.sha, 'escalator/window', (run) => run.conclusion === 'success');
      expect(passed.output.summary).toBe('staging is inside an allowed window until Mon 17:00 Europe/Berlin');
    },
  );

  it(
    'freezes the repository: a failing escalator/freeze check, no auto-merge, promote refused; it ends on its own',
    { timeout: 150_000 },
    async () => {
      offset = 0;
      await seed('freeze', configOf());
      const notes = await notesPull('freeze');
      const until = new Date(simNow() + 30_000).toISOString().slice(0, 19) + 'Z';
      await stack.client.comment(`${owner}/freeze`, notes.number, `/escalator freeze all until ${until} code freeze`);
      const answer = await replyContaining('freeze', notes.number, 'Frozen:');
      // Markdown-escaped (\@ mentions no one, \- is a hyphen).
      const text = answer.body!.replace(/\\/g, '');
      expect(text).toContain('the repository frozen by @developer on ');
      // Times are written to the second, and to the minute when the seconds are 00.
      const untilText = `${until.slice(0, 10)} ${until.slice(11, until.slice(17, 19) === '00' ? 16 : 19)} UTC`;
      expect(text).toContain(`until ${untilText}: code freeze`);
      await commit('freeze', { 'apps/hello/overlays/dev/kustomization.yaml': overlay('1.1.0') });
      const pull = await promotion('freeze');
      const failing = await checkRun(
        'freeze',
        pull.head.sha,
        'escalator/freeze',
        (run) => run.conclusion === 'failure',
      );
      expect(failing.output.summary).toContain('code freeze. Nothing merges into staging automatically');
      await stack.client.comment(`${owner}/freeze`, notes.number, '/escalator promote staging hello');
      await replyContaining('freeze', notes.number, 'Not promoting into **staging**');
      expect(
        (await stack.user.rest.pulls.get({ owner, repo: 'freeze', pull_number: pull.number })).data.merged_at,
      ).toBeNull();
      // The freeze ends: the delayed re-plan turns the check green and auto-merge merges. GitHub's
      // clock and the jobs' move to the end of the freeze, and the re-plan runs now.
      const ahead = Math.ceil((Date.parse(until) - simNow()) / 1000) + 1;
      await stack.client.advanceClock(ahead);
      offset += ahead * 1000;
      await runDelayedNow(stack, 'promote', (job) => job.data.repo === 'freeze' && job.data.reason === 'freeze', {
        what: 'the re-plan at the end of the freeze',
      });
      const done = await merged('freeze', pull.number);
      expect(Date.parse(done.merged_at!)).toBeGreaterThanOrEqual(Date.parse(until));
      await checkRun('freeze', pull.head.sha, 'escalator/freeze', (run) => run.conclusion === 'success');
    },
  );

  it(
    "holds a bump back from auto-merge during a freeze and says so on the dashboard's list",
    { timeout: 120_000 },
    async () => {
      offset = 0;
      const image = 'ghcr.io/example/frozen-bump';
      await stack.client.createRepo({
        name: 'frozen-bump',
        files: {
          '.github/escalator.yml':
            'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n    autoMerge: true\n',
          'apps/app/overlays/dev/kustomization.yaml': `images:\n  - name: ${image}\n    newTag: 1.0.0\n`,
        },
      });
      await waitIndexed(stack, owner, 'frozen-bump');
      const notes = await notesPull('frozen-bump');
      await stack.client.comment(`${owner}/frozen-bump`, notes.number, '/escalator freeze dev for 1d');
      await replyContaining('frozen-bump', notes.number, 'Frozen:');
      expect((await postImage(stack, `${image}:1.1.0`)).status).toBe(202);
      const redis = new Redis(redisUrl);
      try {
        const store = new RepoState(redis, stack.prefix);
        const held = await eventually(
          async () =>
            (await store.dashboard.loadAttention({ installationId: 0, owner, repo: 'frozen-bump' })).find((a) =>
              a.what.startsWith('bump #'),
            ),
          { what: 'the bump to be held back', timeoutMs: 60_000 },
        );
        expect(held.reason).toMatch(
          /^not merged automatically: dev frozen by @developer on .* until .*\. Nothing merges into dev automatically/,
        );
        const number = Number(/#(\d+)/.exec(held.what)![1]);
        const pull = (await stack.user.rest.pulls.get({ owner, repo: 'frozen-bump', pull_number: number })).data;
        expect(pull.state).toBe('open');
        expect(pull.merged_at).toBeNull();
      } finally {
        await redis.quit();
      }
    },
  );
});
