import { Octokit } from '@octokit/rest';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RepoState } from '../../src/adapters/store/repo-state.js';
import { eventually, redisUrl, startStack, waitIndexed, type Stack } from '../support/stack.js';

const owner = 'developer';
const repo = 'freeze-owners';
const config =
  'environments:\n  - name: dev\n    paths: ["apps/*/overlays/dev"]\n    from: registry\n  - name: prod\n    paths: ["apps/*/overlays/prod"]\n    from: dev\n';
const overlay = 'images:\n  - name: ghcr.io/example/hello\n    newTag: 1.0.0\n';

/**
 * Who may lift a freeze someone else set (docs/controls.md, "Freezes"): the person who set it, or
 * someone with maintain or admin permission; another writer is told who can. Each person comments
 * with their own token through the sandbox GitHub's REST API, so every command reaches the App as a
 * signed `issue_comment` webhook and the App asks GitHub for the commenter's permission.
 */
describe('lifting a freeze someone else set (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  let redis: Redis;
  let store: RepoState;
  let issue: number;
  const people: Record<string, Octokit> = {};
  const tag = () => stack.prefix.slice(-6);
  const login = (name: string) => `${name}-${tag()}`;

  beforeAll(async () => {
    stack = await startStack({}, { name: 'e2e-freeze-owners' });
    for (const name of ['bob', 'carol', 'mia']) {
      const { token } = await stack.client.createUser(login(name));
      people[name] = new Octokit({
        baseUrl: stack.sim.apiUrl,
        auth: token as string,
        log: { debug: () => {}, info: () => {}, warn: () => {}, error: () => {} },
      });
    }
    await stack.client.createRepo({
      name: repo,
      collaborators: { [login('bob')]: 'write', [login('carol')]: 'write', [login('mia')]: 'maintain' },
      files: {
        '.github/escalator.yml': config,
        'apps/hello/overlays/dev/kustomization.yaml': overlay,
        'apps/hello/overlays/prod/kustomization.yaml': overlay,
      },
    });
    await waitIndexed(stack, owner, repo);
    issue = (await stack.user.rest.issues.create({ owner, repo, title: 'release 2026-12' })).data.number;
    redis = new Redis(redisUrl);
    store = new RepoState(redis, stack.prefix);
  }, 60_000);
  afterAll(async () => {
    await redis?.quit();
    await stack?.close();
  });

  /** `name` comments `body`; the App's reply to it (the first bot comment after it). */
  async function say(name: string, body: string): Promise<string> {
    const { data: asked } = await people[name]!.rest.issues.createComment({ owner, repo, issue_number: issue, body });
    const reply = await eventually(
      async () =>
        (await stack.user.paginate(stack.user.rest.issues.listComments, { owner, repo, issue_number: issue })).find(
          (c) => c.id > asked.id && c.user?.type === 'Bot',
        ),
      { what: `the reply to ${name}'s ${JSON.stringify(body)}` },
    );
    // Markdown-escaped (\@ mentions no one).
    return reply.body!.replace(/\\/g, '');
  }
  const freezes = () => store.freezes.loadFreezes({ installationId: 0, owner, repo });

  it('another writer is refused and told who can; the freeze stays', async () => {
    expect(await say('bob', '/escalator freeze prod for 2d release week')).toContain(
      `Frozen: prod frozen by @${login('bob')} on `,
    );
    const refused = await say('carol', '/escalator unfreeze prod');
    expect(refused).toMatch(
      new RegExp(`^@${login('carol')} Not unfrozen: prod frozen by @${login('bob')} on .*: release week\\. `),
    );
    expect(refused).toContain(
      `A freeze is lifted or changed only by the person who set it (@${login('bob')}) or by someone with maintain or admin permission on ${owner}/${repo}; ask one of them. Otherwise it ends on `,
    );
    expect((await freezes()).map((f) => [f.scope, f.by])).toEqual([['prod', `@${login('bob')}`]]);
  });

  it('nor can another writer shorten it by freezing again, or lift it with "all"', async () => {
    expect(await say('carol', '/escalator freeze prod for 1m')).toMatch(
      new RegExp(`^@${login('carol')} Not frozen again: prod frozen by @${login('bob')} `),
    );
    expect(await say('carol', '/escalator unfreeze all')).toMatch(new RegExp(`^@${login('carol')} Not unfrozen: `));
    expect((await freezes()).map((f) => [f.scope, f.by, f.reason])).toEqual([
      ['prod', `@${login('bob')}`, 'release week'],
    ]);
  });

  it('"unfreeze all" lifts the writer\'s own freeze and keeps the one someone else set', async () => {
    expect(await say('carol', '/escalator freeze all for 1d')).toContain(
      `Frozen: the repository frozen by @${login('carol')}`,
    );
    const answer = await say('carol', '/escalator unfreeze all');
    expect(answer).toContain(`Freezes lifted (by @${login('carol')}): the repository frozen by @${login('carol')}`);
    expect(answer).toContain(`Still frozen: prod frozen by @${login('bob')}`);
    expect((await freezes()).map((f) => f.scope)).toEqual(['prod']);
  });

  it('a maintainer lifts it', async () => {
    expect(await say('mia', '/escalator unfreeze prod')).toContain(
      `Freeze lifted on **prod** (by @${login('mia')}): prod frozen by @${login('bob')}`,
    );
    expect(await freezes()).toEqual([]);
  });

  it('and so does the writer who set it', async () => {
    await say('bob', '/escalator freeze prod');
    expect(await say('bob', '/escalator unfreeze prod')).toContain(`Freeze lifted on **prod** (by @${login('bob')})`);
    expect(await freezes()).toEqual([]);
  });
});
