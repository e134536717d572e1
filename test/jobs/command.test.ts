import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commandHelp } from '../../src/planners/commands.js';
import { DIFF_COMMENT_MARKER } from '../../src/planners/diff/comment.js';
import { escapeText } from '../../src/planners/markdown.js';
import { eventually, redisUrl, startStack, waitIndexed, type Stack } from '../support/stack.js';

const owner = 'developer';
const repo = 'commands';
const config =
  'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n  - name: prod\n    paths: ["apps/*/overlays/prod"]\n    from: dev\n';

/**
 * `/escalator` commands through the whole product (sandbox GitHub, real Redis): who gets an
 * answer, and which. The job's return value says what it decided, so silence is asserted on a
 * finished job, not on a wait.
 */
describe('command job (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  let connection: Redis;
  let queue: Queue;
  let number: number;
  let reader: string;
  let readerToken: string;

  beforeAll(async () => {
    stack = await startStack();
    reader = `reader-${stack.prefix.slice(4)}`;
    const created = await stack.client.createUser(reader);
    readerToken = created.token as string;
    await stack.client.createRepo({
      name: repo,
      collaborators: { [reader]: 'read' },
      files: {
        '.github/escalator.yml': config,
        'apps/hello/overlays/dev/kustomization.yaml': 'images:\n  - name: ghcr.io/example/hello\n    newTag: 1.0.0\n',
      },
    });
    await waitIndexed(stack, owner, repo);
    await stack.client.commit(`${owner}/${repo}`, { branch: 'notes', from: 'main', files: { 'NOTES.md': 'notes\n' } });
    number = (await stack.client.openPull(`${owner}/${repo}`, { title: 'notes', head: 'notes' })).number;
    connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
    queue = new Queue('command', { connection, prefix: stack.prefix });
  }, 60_000);
  afterAll(async () => {
    await queue?.close();
    await connection?.quit();
    await stack?.close();
  });

  /** The finished command job for a comment body (each test writes a distinct one). */
  const finished = (body: string) =>
    eventually(
      async () => {
        const jobs = await queue.getJobs(['completed', 'failed']);
        const job = jobs.find((candidate) => (candidate.data as { body: string }).body === body);
        return job?.finishedOn ? job : undefined;
      },
      { what: `the command job for ${JSON.stringify(body)}` },
    );
  const comments = async () => (await stack.user.rest.issues.listComments({ owner, repo, issue_number: number })).data;
  const repliesTo = async (text: string) =>
    (await comments()).filter((comment) => comment.user?.type === 'Bot' && comment.body?.includes(text));
  const permissionCalls = () =>
    stack.calls.filter((call) => call.route.includes('/collaborators/') && call.route.endsWith('/permission')).length;

  it.each([
    ['an unknown command', '/escalator frobnicate'],
    ['an argument that is not a name', '/escalator promote prod;rm -rf /'],
    ['too many arguments', '/escalator hold prod hello extra'],
  ])('answers nothing to %s from someone without write access', async (_what, body) => {
    const before = (await comments()).length;
    const callsBefore = permissionCalls();
    await stack.client.as(readerToken).comment(`${owner}/${repo}`, number, body);
    const job = await finished(body);
    expect(job.returnvalue).toBe('ignored: malformed command without write permission');
    // The permission was asked, and nothing was written: only the reader's own comment is new
    // (besides the diff comment the pull request gets on its own, whenever its render ends).
    expect(permissionCalls()).toBe(callsBefore + 1);
    const after = (await comments()).slice(before).filter((comment) => !comment.body?.startsWith(DIFF_COMMENT_MARKER));
    expect(after.map((comment) => comment.user?.login)).toEqual([reader]);
  });

  it('refuses a well-formed command from someone without write access, and says why', async () => {
    const body = '/escalator hold prod';
    await stack.client.as(readerToken).comment(`${owner}/${repo}`, number, body);
    const job = await finished(body);
    expect(job.returnvalue).toBe(
      `@${reader} Escalator commands need write access to ${owner}/${repo}; yours is \`read\`. Ask a maintainer to run it.`,
    );
    expect(await repliesTo(`@${reader} Escalator commands need write access`)).toHaveLength(1);
  });

  it('says it once: the same author refused again in the same repository gets no second reply', async () => {
    const body = '/escalator release prod';
    await stack.client.as(readerToken).comment(`${owner}/${repo}`, number, body);
    expect((await finished(body)).returnvalue).toBe('ignored: refused in this repository today');
    expect(await repliesTo(`@${reader} Escalator commands need write access`)).toHaveLength(1);
  });

  it('gives help only to someone with write access', async () => {
    const body = '/escalator help ';
    await stack.client.as(readerToken).comment(`${owner}/${repo}`, number, body);
    expect((await finished(body)).returnvalue).toBe('ignored: refused in this repository today');
    await stack.client.comment(`${owner}/${repo}`, number, '/escalator help');
    expect((await finished('/escalator help')).returnvalue).toBe(commandHelp);
  });

  it('tells a writer what is wrong with a malformed command, with the help', async () => {
    const body = '/escalator promote';
    await stack.client.comment(`${owner}/${repo}`, number, body);
    const job = await finished(body);
    const message =
      '/escalator promote needs an environment, and optionally an app: /escalator promote <env> [app] [--now]';
    expect(job.returnvalue).toBe(`Escalator could not read that command: ${escapeText(message)}.\n\n${commandHelp}`);
    expect(await repliesTo('Escalator could not read that command')).toHaveLength(1);
  });

  it('ignores a command job written by an App, without asking GitHub anything', async () => {
    const body = '/escalator nonsense from an app';
    // The pull request's own diff job calls GitHub whenever its render ends: count from after it.
    const diffs = new Queue('diff', { connection, prefix: stack.prefix });
    await eventually(
      async () => {
        const counts = await diffs.getJobCounts('active', 'wait', 'delayed', 'prioritized');
        return Object.values(counts).every((count) => count === 0) ? true : undefined;
      },
      { what: "the pull request's diff job to end" },
    );
    await diffs.close();
    const callsBefore = stack.calls.length;
    const index = JSON.parse((await connection.get(`${stack.prefix}:index:repo:${owner}/${repo}`)) as string) as {
      installationId: number;
    };
    await queue.add(
      'command',
      {
        installationId: index.installationId,
        owner,
        repo,
        issueNumber: number,
        isPull: true,
        author: 'other-app[bot]',
        body,
      },
      { jobId: `command-bot-${stack.prefix}` },
    );
    const job = await finished(body);
    expect(job.returnvalue).toBe('ignored: written by a bot');
    expect(stack.calls.length).toBe(callsBefore);
  });
});
