import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedAgent, type AgentObject } from '@escalator/github-sandbox/agents';
import { agentKey } from '../../src/intake/agent-routes.js';
import type { PromoteJob } from '../../src/queue/enqueue.js';
import { eventually, readFile, redisUrl, startStack, waitIndexed, type Stack } from '../support/stack.js';

/**
 * A rollback sticks, with the sandbox's simulated Argo CD and Flux reporting every push in their
 * own wire formats: staging goes Degraded after a promotion → one rollback pull request, merged,
 * labelled → over several reconcile cycles (pushes, each reported by the agent, each planning
 * dev → staging again) the version rolled back from is not proposed again → a new version in dev
 * is → a degradation that stays after the next rollback halts staging for hello with one message,
 * and no further rollback. Every wait is on something that happened (a pull request, a report
 * the agent sent, a promotion job that finished), never on a clock.
 */
const owner = 'developer';
const token = 'agent-token-for-the-rollback-0123456789';
const digest = (byte: string) => `sha256:${byte.repeat(64)}`;
const overlay = (tag: string, byte: string) =>
  `images:\n  - {name: ghcr.io/example/hello, newTag: ${tag}, digest: ${digest(byte)}}\n`;
const DEV = 'apps/hello/overlays/dev/kustomization.yaml';
const STAGING = 'apps/hello/overlays/staging/kustomization.yaml';

describe.concurrent.each(['argocd', 'flux'] as const)(
  'a rollback sticks, reported by %s (sandbox GitHub, real Redis)',
  (agent) => {
    let stack: Stack;
    let sim: SimulatedAgent | undefined;
    let redis: Redis;
    let promote: Queue;
    beforeAll(async () => {
      stack = await startStack({ ESCALATOR_AGENT_TOKEN: token }, { name: `rollback-${agent}` });
      redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
      promote = new Queue('promote', { connection: redis, prefix: stack.prefix });
    });
    afterAll(async () => {
      await sim?.close();
      await promote?.close();
      await redis?.quit();
      await stack?.close();
    });

    it(
      'one rollback, merged and labelled; 1.2.0 never proposed again; 1.3.0 is; degraded after the next rollback halts with one message',
      { timeout: 300_000 },
      async () => {
        const repo = `sticks-${agent}`;
        const health = (env: string, extra = '') =>
          agent === 'argocd' ? `{ argocd: "{app}-${env}"${extra} }` : `{ flux: "flux-system/apps-${env}"${extra} }`;
        const objects: AgentObject[] = ['dev', 'staging'].map((environment) => ({
          object: agent === 'argocd' ? `hello-${environment}` : `flux-system/apps-${environment}`,
          environment,
        }));
        const stagingObject = objects[1]!.object;
        const devObject = objects[0]!.object;
        await stack.client.createRepo({
          name: repo,
          files: {
            '.github/escalator.yml': `dashboard: true
environments:
  - name: dev
    paths: ["apps/*/overlays/dev"]
    from: registry
    health: ${health('dev')}
  - name: staging
    paths: ["apps/*/overlays/staging"]
    from: dev
    autoMerge: true
    rollback: auto
    health: ${health('staging', ', tolerate: 4s')}
`,
            [DEV]: overlay('1.1.0', 'a'),
            [STAGING]: overlay('1.1.0', 'a'),
            'notes.md': 'cycle 0\n',
          },
        });
        await waitIndexed(stack, owner, repo);
        sim = new SimulatedAgent({
          agent,
          escalatorUrl: stack.app.url,
          key: agentKey(token, owner),
          owner,
          repo,
          branch: 'main',
          githubApiUrl: stack.sim.apiUrl,
          githubToken: stack.sim.user.token,
          repoURL: `${stack.sim.url}/${owner}/${repo}.git`,
          objects,
          delayMs: 500,
          pollMs: 200,
        });
        const control = await sim.start();
        const act = async (verb: 'degrade' | 'recover') => {
          const message = encodeURIComponent('Deployment hello: 0/2 replicas ready');
          const response = await fetch(
            `${control}/${verb}?object=${encodeURIComponent(stagingObject)}&message=${message}`,
            {
              method: 'POST',
            },
          );
          expect(response.status).toBe(200);
        };
        const head = async () =>
          (await stack.user.rest.repos.getBranch({ owner, repo, branch: 'main' })).data.commit.sha;
        /** The agent reported `object` at `revision` (and Escalator took it). */
        const reported = (object: string, revision: string, health?: string) =>
          eventually(
            async () =>
              sim!.sent.find(
                (s) =>
                  s.object === object &&
                  s.revision === revision &&
                  (!health || s.health === health) &&
                  s.status === 202,
              ),
            { what: `${object} reported at ${revision.slice(0, 7)}`, timeoutMs: 60_000 },
          );
        const pulls = async () =>
          (await stack.user.rest.pulls.list({ owner, repo, state: 'all', per_page: 100 })).data.sort(
            (a, b) => a.number - b.number,
          );
        const merged = (title: string) =>
          eventually(async () => (await pulls()).find((p) => p.title === title && p.merged_at !== null), {
            what: `"${title}" merged`,
            timeoutMs: 90_000,
          });
        /** Promotion jobs into staging for hello that finished after `since`. */
        const stagingRuns = async (since: number) =>
          (await promote.getJobs(['completed']))
            .filter((job) => (job.finishedOn ?? 0) > since)
            .map((job) => ({ data: job.data as PromoteJob, value: job.returnvalue as { pull?: number; rows: number } }))
            .filter((run) => run.data.environment === 'staging' && run.data.app === 'hello');
        /** Comment `/escalator plan` on `issue` and read the `nth` answer (markdown escapes removed). */
        const askPlan = async (issue: number, nth: number) => {
          await stack.client.comment(`${owner}/${repo}`, issue, '/escalator plan');
          return eventually(
            async () => {
              const answers = (await stack.user.rest.issues.listComments({ owner, repo, issue_number: issue })).data
                .map((c) => c.body ?? '')
                .filter((b) => b.startsWith('**Escalator plan**'));
              return answers.length >= nth ? answers[nth - 1]!.replaceAll('\\', '') : undefined;
            },
            { what: `the answer to /escalator plan on #${issue}`, timeoutMs: 60_000 },
          );
        };
        /** One reconcile cycle: a push, the agent reporting it, and dev → staging planned again from that report. */
        const cycle = async (n: number) => {
          // Before the push: the run the report starts may finish before the report is seen here.
          const seen = Date.now();
          const { sha } = await stack.client.commit(`${owner}/${repo}`, {
            branch: 'main',
            files: { 'notes.md': `cycle ${n}\n` },
          });
          await reported(devObject, sha);
          return eventually(
            async () => {
              const runs = (await stagingRuns(seen)).filter((run) => run.data.reason === 'health');
              return runs.length > 0 ? runs : undefined;
            },
            { what: `dev → staging planned again after cycle ${n}`, timeoutMs: 60_000 },
          );
        };

        // Staging ran 1.1.0 healthy (the agent's first report records it healthy there).
        await reported(stagingObject, await head(), 'Healthy');
        await eventually(
          async () => ((await redis.get(`${stack.prefix}:healthy:${owner}/${repo}:staging:hello`)) ? true : undefined),
          { what: 'staging recorded healthy at 1.1.0' },
        );

        // 1.2.0 lands in dev; its promotion waits for dev's agent, then merges itself.
        await stack.client.commit(`${owner}/${repo}`, { branch: 'main', files: { [DEV]: overlay('1.2.0', 'b') } });
        const promoted = await merged('Promote hello 1.2.0 to staging');
        await reported(stagingObject, promoted.merge_commit_sha!);

        // Staging goes Degraded on 1.2.0: one rollback, merged by autoMerge.
        await act('degrade');
        const rollback = await eventually(
          async () => (await pulls()).find((p) => p.title === 'Roll back hello in staging: 1.2.0 → 1.1.0'),
          { what: 'the rollback pull request', timeoutMs: 60_000 },
        );
        // Healthy again from here on (the rollback fixed it).
        await act('recover');
        const back = await merged('Roll back hello in staging: 1.2.0 → 1.1.0');
        expect(back.number).toBe(rollback.number);
        expect(back.labels.map((label) => label.name).sort()).toEqual(['env:staging', 'rollback']);
        const body = back.body?.replaceAll('\\', '') ?? '';
        expect(body).toContain('Escalator rolls **staging** back to versions it ran before.');
        expect(body).toMatch(/\*\*Why:\*\* hello 1\.2\.0 went Degraded in staging at \d\d:\d\d for \d+s/);
        expect(body).toContain('Deployment hello: 0/2 replicas ready');
        expect(body).toMatch(/\*\*Provenance:\*\* `1\.1\.0` last came into staging with commit [0-9a-f]{40}/);
        expect(await readFile(stack, owner, repo, STAGING, 'main')).toBe(overlay('1.1.0', 'a'));
        await reported(stagingObject, back.merge_commit_sha!, 'Healthy');

        // Several reconcile cycles: dev still runs 1.2.0, and each plans dev → staging again.
        for (const n of [1, 2, 3]) {
          const runs = await cycle(n);
          expect(runs.every((run) => run.value.pull === undefined && run.value.rows === 0)).toBe(true);
        }
        const afterCycles = await pulls();
        expect(afterCycles.filter((p) => p.state === 'open')).toEqual([]);
        expect(afterCycles.filter((p) => p.title.includes('1.2.0')).map((p) => p.number)).toEqual([
          promoted.number,
          back.number,
        ]);

        // `/escalator plan` says so instead of listing 1.2.0 as ready.
        const plan = await askPlan(back.number, 1);
        expect(plan).toContain('⛔ rollback: staging was rolled back from hello 1.2.0 at ');
        expect(plan).toContain(
          'Escalator proposes 1.2.0 again only when dev runs another version, or when a person comments /escalator promote staging hello',
        );

        // A new version in dev is proposed (and lifts the rollback's hold on 1.2.0).
        await stack.client.commit(`${owner}/${repo}`, { branch: 'main', files: { [DEV]: overlay('1.3.0', 'c') } });
        const next = await merged('Promote hello 1.3.0 to staging');
        expect(next.labels.map((label) => label.name)).toContain('promotion');
        await reported(stagingObject, next.merge_commit_sha!, 'Healthy');

        // Degraded on 1.3.0, and it stays Degraded after the rollback: the cause is not the version.
        await act('degrade');
        const second = await merged('Roll back hello in staging: 1.3.0 → 1.1.0');
        await reported(stagingObject, second.merge_commit_sha!, 'Degraded');
        const comments = async () =>
          (await stack.user.rest.issues.listComments({ owner, repo, issue_number: second.number })).data.map(
            (c) => c.body ?? '',
          );
        const halted = await eventually(
          async () => {
            const found = (await comments()).filter((c) => c.startsWith('**Escalator halted hello in staging.**'));
            return found.length > 0 ? found : undefined;
          },
          { what: 'the halt, said on the rollback pull request', timeoutMs: 60_000 },
        );
        expect(halted[0]?.replaceAll('\\', '')).toContain(
          'Comment `/escalator release staging hello` to lift the halt',
        );
        expect(await redis.hget(`${stack.prefix}:hold:${owner}/${repo}:staging`, 'hello')).toBe(
          'Escalator: hello stayed degraded in staging after the rollback from 1.3.0 to 1.1.0',
        );
        // The plan shows the halt and how to lift it.
        const haltedPlan = await askPlan(second.number, 1);
        expect(haltedPlan).toContain(
          '⛔ hold: promotion into staging is on hold (Escalator: hello stayed degraded in staging after the rollback from 1.3.0 to 1.1.0); comment /escalator release to lift it',
        );
        // So does the dashboard.
        await eventually(
          async () => {
            const issue = (await stack.user.rest.issues.listForRepo({ owner, repo, state: 'open' })).data.find(
              (i) => i.title === 'Escalator: environments',
            );
            const text = issue?.body?.replaceAll('\\', '') ?? '';
            return text.includes(
              '- ✋ promotion into **staging** for `hello` is on hold (by Escalator: hello stayed degraded in staging after the rollback from 1.3.0 to 1.1.0)',
            ) && text.includes('hello in staging, halted after a rollback')
              ? text
              : undefined;
          },
          { what: 'the dashboard to show the halt', timeoutMs: 60_000 },
        );
        // Two more cycles, still Degraded: no second rollback, no second message.
        for (const n of [4, 5]) {
          const { sha } = await stack.client.commit(`${owner}/${repo}`, {
            branch: 'main',
            files: { 'notes.md': `cycle ${n}\n` },
          });
          await reported(stagingObject, sha, 'Degraded');
          await cycle(n + 10);
        }
        expect((await comments()).filter((c) => c.startsWith('**Escalator halted'))).toHaveLength(1);
        const timeline = (await pulls()).map((p) => ({
          number: p.number,
          title: p.title,
          labels: p.labels.map((label) => label.name).sort(),
          merged: p.merged_at !== null,
        }));
        expect(timeline).toEqual([
          {
            number: promoted.number,
            title: 'Promote hello 1.2.0 to staging',
            labels: ['env:staging', 'promotion'],
            merged: true,
          },
          {
            number: back.number,
            title: 'Roll back hello in staging: 1.2.0 → 1.1.0',
            labels: ['env:staging', 'rollback'],
            merged: true,
          },
          {
            number: next.number,
            title: 'Promote hello 1.3.0 to staging',
            labels: ['env:staging', 'promotion'],
            merged: true,
          },
          {
            number: second.number,
            title: 'Roll back hello in staging: 1.3.0 → 1.1.0',
            labels: ['env:staging', 'rollback'],
            merged: true,
          },
        ]);
        const order = (await pulls())
          .filter((p) => p.merged_at)
          .sort((a, b) => Date.parse(a.merged_at!) - Date.parse(b.merged_at!) || a.number - b.number)
          .map((p) => p.number);
        expect(order).toEqual([promoted.number, back.number, next.number, second.number]);
        if (process.env.ROLLBACK_TIMELINE)
          process.stdout.write(`${agent} timeline ${JSON.stringify({ timeline, order })}\n`);
      },
    );
  },
);
