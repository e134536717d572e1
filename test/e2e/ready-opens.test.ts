import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { startEscalator } from '../../src/main/server.js';
import { healthIntake, type HealthIntake } from '../support/health.js';
import { appEnv, eventually, redisUrl, startStack, waitIndexed, type Stack } from '../support/stack.js';

/**
 * Ready means opened. A repository may hold a promotion before anything lands: the sandbox's
 * example runs world 2.3.0 in dev and 2.2.1 in staging from its first commit. `/escalator plan`
 * listed it "ready at" the end of its soak, but no pull request ever opened: promotions opened on
 * a merge only, and a health report re-checks open promotions only. The first index now plans
 * them, so the soak (counted from the first index, or from the agent's healthy-since) schedules
 * its re-check from the pull request, and the promotion merges when its time comes, across a
 * restart of Escalator in between. Each test waits on what GitHub holds, never on a clock.
 */
const owner = 'developer';
const overlay = (tag: string) => `images:\n  - name: ghcr.io/example/world\n    newTag: ${tag}\n`;
const configWith = (devExtra: string, soak: string) => `environments:
  - name: dev
    paths: ["apps/*/overlays/dev"]
    from: registry
${devExtra}  - name: staging
    paths: ["apps/*/overlays/staging"]
    from: dev
    soak: ${soak}
    autoMerge: true
`;

describe('a promotion the repository holds when indexed (sandbox GitHub, real Redis)', () => {
  let stack: Stack;
  let intake: HealthIntake;
  /** Every line Escalator logged (at info), parsed. */
  const logged: Array<Record<string, unknown>> = [];
  beforeAll(async () => {
    const destination = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n'))
          if (line.trim()) logged.push(JSON.parse(line) as Record<string, unknown>);
        done();
      },
    });
    stack = await startStack({}, { name: 'ready-opens', log: createLogger({ level: 'info', destination }) });
    intake = healthIntake(stack);
  });
  afterAll(async () => {
    await intake?.close();
    await stack?.close();
  });

  async function seed(repo: string, config: string): Promise<string> {
    await stack.client.createRepo({
      name: repo,
      files: {
        '.github/escalator.yml': config,
        'apps/world/overlays/dev/kustomization.yaml': overlay('2.3.0'),
        'apps/world/overlays/staging/kustomization.yaml': overlay('2.2.1'),
      },
    });
    await waitIndexed(stack, owner, repo);
    return (await stack.user.rest.repos.getBranch({ owner, repo, branch: 'main' })).data.commit.sha;
  }
  const promotion = (repo: string) =>
    eventually(
      async () =>
        (await stack.user.rest.pulls.list({ owner, repo, state: 'all' })).data.find(
          (p) => p.head.ref === 'escalator/promote/staging/world',
        ),
      { what: 'the promotion PR', timeoutMs: 60_000 },
    );
  const checkRun = (
    repo: string,
    sha: string,
    name: string,
    predicate: (run: { status: string; conclusion: string | null }) => boolean,
  ) =>
    eventually(
      async () => {
        const run = (await stack.user.rest.checks.listForRef({ owner, repo, ref: sha, check_name: name })).data
          .check_runs[0];
        return run && predicate(run) ? run : undefined;
      },
      { what: `${name} on ${sha.slice(0, 7)}`, timeoutMs: 60_000 },
    );
  const merged = (repo: string, number: number) =>
    eventually(
      async () => {
        const pull = (await stack.user.rest.pulls.get({ owner, repo, pull_number: number })).data;
        return pull.merged_at ? pull : undefined;
      },
      { what: 'the promotion to merge', timeoutMs: 60_000 },
    );
  const staging = async (repo: string) => {
    const { data } = await stack.user.rest.repos.getContent({
      owner,
      repo,
      path: 'apps/world/overlays/staging/kustomization.yaml',
    });
    return Array.isArray(data) || data.type !== 'file' ? '' : Buffer.from(data.content, 'base64').toString('utf8');
  };

  it('opens at the first index, soaks from it, and merges when the soak ends', { timeout: 120_000 }, async () => {
    const indexedBefore = Date.now();
    await seed('no-agent', configWith('', '3s'));
    const pull = await promotion('no-agent');
    expect(pull.title).toBe('Promote world 2.3.0 to staging');
    await checkRun('no-agent', pull.head.sha, 'escalator/soak', (run) => run.status === 'in_progress');
    const done = await merged('no-agent', pull.number);
    // Not before the soak counted from the first index (GitHub stamps whole seconds).
    expect(Date.parse(done.merged_at!)).toBeGreaterThanOrEqual(Math.floor((indexedBefore + 3_000) / 1000) * 1000);
    await checkRun('no-agent', pull.head.sha, 'escalator/soak', (run) => run.conclusion === 'success');
    expect(await staging('no-agent')).toBe(overlay('2.3.0'));
  });

  it(
    'a health report while no promotion is open logs that the versions differ and opens nothing; never "already runs"',
    { timeout: 120_000 },
    async () => {
      const repo = 'closed-by-a-person';
      const seeded = await seed(repo, configWith('    health: { argocd: "{app}-dev" }\n', '1h'));
      const pull = await promotion(repo);
      await stack.user.rest.pulls.update({ owner, repo, pull_number: pull.number, state: 'closed' });
      const from = logged.length;
      const at = new Date().toISOString();
      await intake.report(owner, repo, 'dev', 'world', {
        revision: seeded,
        sync: 'synced',
        health: 'healthy',
        healthySince: at,
        reportedAt: at,
        source: { agent: 'argocd', object: 'world-dev' },
      });
      // The re-check the report asked for: dev runs world 2.3.0, staging 2.2.1, and no pull request is open.
      // A job's lines name the repository in their job id (promote__<owner>__<repo>__…); the name is this test's own.
      const ofRepo = (line: Record<string, unknown>) => JSON.stringify(line).includes(repo);
      const said = await eventually(
        async () =>
          logged
            .slice(from)
            .find(
              (line) =>
                ofRepo(line) &&
                line.environment === 'staging' &&
                line.msg ===
                  'Promotion not opened: the versions differ, but this re-check only updates an open promotion pull request',
            ),
        { what: 'the log line of the re-check the health report asked for', timeoutMs: 60_000 },
      );
      expect(said).toMatchObject({ source: 'dev', reason: 'health', next: '/escalator promote staging world' });
      expect(
        logged.filter((line) => ofRepo(line) && typeof line.msg === 'string' && line.msg.includes('already runs')),
      ).toEqual([]);
      // A report only moves the gates of open promotions: the closed one stays closed, nothing else opens.
      expect(
        (await stack.user.rest.pulls.list({ owner, repo, state: 'all' })).data.map((p) => [p.number, p.state]),
      ).toEqual([[pull.number, 'closed']]);
    },
  );

  it(
    'with Argo CD: opens with health pending, soaks from the healthy-since the agent reports, and merges across a restart',
    { timeout: 150_000 },
    async () => {
      const seeded = await seed('agent', configWith('    health: { argocd: "{app}-dev" }\n', '6s'));
      const pull = await promotion('agent');
      await checkRun('agent', pull.head.sha, 'escalator/health', (run) => run.status === 'in_progress');
      await checkRun('agent', pull.head.sha, 'escalator/soak', (run) => run.status === 'in_progress');

      // Argo CD reports dev synced and healthy on the commit the repository was indexed at.
      const healthySince = new Date().toISOString();
      await intake.report(owner, 'agent', 'dev', 'world', {
        revision: seeded,
        sync: 'synced',
        health: 'healthy',
        healthySince,
        reportedAt: healthySince,
        source: { agent: 'argocd', object: 'world-dev' },
      });
      await checkRun('agent', pull.head.sha, 'escalator/health', (run) => run.conclusion === 'success');
      const soaking = await checkRun('agent', pull.head.sha, 'escalator/soak', (run) => run.status === 'in_progress');
      expect(soaking.status).toBe('in_progress');

      // Escalator stops while the soak's re-check waits in Redis, and another one starts.
      await stack.app.close();
      const log = createLogger({ level: process.env.E2E_LOG_LEVEL ?? 'silent' });
      const second = await startEscalator(
        { ...appEnv(stack.sim, redisUrl), PORT: '0', LOG_LEVEL: 'silent', ESCALATOR_DEBOUNCE_MS: '200' },
        { prefix: stack.prefix, log },
      );
      stack.sim.setWebhookUrl(`${second.url}/api/github/webhooks`);
      try {
        const done = await merged('agent', pull.number);
        expect(Date.parse(done.merged_at!)).toBeGreaterThanOrEqual(
          Math.floor((Date.parse(healthySince) + 6_000) / 1000) * 1000,
        );
        await checkRun('agent', pull.head.sha, 'escalator/soak', (run) => run.conclusion === 'success');
        expect(await staging('agent')).toBe(overlay('2.3.0'));
      } finally {
        await second.close();
      }
    },
  );
});
