/**
 * `npm run bench:config-promote-calls` (`npx tsx bench/config-promote-calls.ts`): the GitHub API
 * calls a configuration promotion costs beside an image promotion, in the same process, against
 * the sandbox GitHub with real Redis (docs/configuration.md, "Promote configuration").
 *
 * 1. CONFIG_PROMOTE_N (default 3) pairs of GitOps repositories of 2 apps each, all alike:
 *    environments dev (from the registry) and staging (from dev, no soak, `promote: {config:
 *    true}`), each overlay patching LOG_LEVEL from its `env.yaml`; wait until all are indexed
 *    and Escalator is idle. One repository of each pair takes image promotions, the other
 *    configuration promotions, so one kind's open promotion PR never moves with the other's merges
 * 2. pair by pair, alternating the kinds (the machine's load falls on both alike):
 *    - image: `POST /api/v1/images` → the dev bump PR → Escalator idle → merge it → the staging
 *      PR `Promote <app> 1.1.0 to staging`
 *    - configuration: a person's pull request setting LOG_LEVEL to debug in the app's dev overlay,
 *      opened → Escalator idle (its rendered diff) → merge it → the staging PR
 *      `Promote <app> configuration to staging`
 * 3. GitHub calls from the merge until Escalator is idle again, by the job that made them, for
 *    each kind, and the ratio configuration / image of their means
 * Figures only; it stops by itself. Keys live under a random prefix and are removed at the end.
 */
import { chainConfig } from '../test/support/environments.js';
import { appName, gitopsFiles, startBenchStack, waitIdle, waitIndexed } from './support/stack.js';
import {
  countCalls,
  measureConfigPromotion,
  measureImagePromotion,
  printPromotionCalls,
  promotionCalls,
  promotionJobs,
  timeLine,
  type PromotionSample,
} from './support/promotion.js';
import { banner, loadavg } from './support/stats.js';

const N = Number(process.env.CONFIG_PROMOTE_N ?? 3);
const APPS_PER_REPO = 2;
const kinds = ['image', 'config'] as const;
type Kind = (typeof kinds)[number];
const repoName = (kind: Kind, r: number) => `gitops-${kind}-${r}`;
const appOf = (kind: Kind, r: number, a: number) => (kind === 'image' ? 0 : N) * APPS_PER_REPO + r * APPS_PER_REPO + a;
const image = (i: number) => `ghcr.io/example/${appName(i)}`;
const digest = (i: number) => `sha256:${(i % 256).toString(16).padStart(2, '0').repeat(32)}`;
const config = chainConfig({ environments: ['dev', 'staging'], extra: { staging: '    promote: { config: true }\n' } });

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);

banner(
  'bench/config-promote-calls.ts — GitHub calls of a configuration promotion beside an image promotion, dev → staging (sandbox GitHub, real Redis, one process)',
);
const stack = await startBenchStack({ ESCALATOR_DEBOUNCE_MS: '0' });
const samples: Record<Kind, PromotionSample[]> = { image: [], config: [] };
let owner = '';
try {
  for (const kind of kinds)
    for (let r = 0; r < N; r++) {
      const created = await stack.client.createRepo({
        name: repoName(kind, r),
        files: gitopsFiles({
          apps: Array.from({ length: APPS_PER_REPO }, (_, a) => appOf(kind, r, a)),
          environments: ['dev', 'staging'],
          config,
          image,
          envPatch: true,
        }),
      });
      owner = created.full_name.split('/')[0] as string;
    }
  for (const kind of kinds)
    for (let r = 0; r < N; r++) await waitIndexed(stack, owner, repoName(kind, r), APPS_PER_REPO * 2);
  await waitIdle(stack);
  const load = loadavg();
  for (let r = 0; r < N; r++) {
    const i = appOf('image', r, 0);
    samples.image.push(
      await measureImagePromotion(stack, {
        owner,
        repo: repoName('image', r),
        app: appName(i),
        image: image(i),
        tag: '1.1.0',
        digest: digest(i),
      }),
    );
    samples.config.push(
      await measureConfigPromotion(stack, {
        owner,
        repo: repoName('config', r),
        app: appName(appOf('config', r, 0)),
        logLevel: 'debug',
      }),
    );
  }

  console.log('');
  console.log(
    `${N} image and ${N} configuration promotions dev → staging, alternating (repositories of ${APPS_PER_REPO} apps, ${APPS_PER_REPO * 2} environment files and ${APPS_PER_REPO * 2} env.yaml patches each; load at start ${load}, at end ${loadavg()})`,
  );
  for (const kind of kinds)
    console.log(
      `  ${timeLine(
        `${kind === 'image' ? 'image' : 'configuration'}: merge returned → promotion PR`,
        samples[kind].map((s) => s.ms),
      )}`,
    );
  for (const kind of kinds) {
    console.log('');
    console.log(
      kind === 'image'
        ? 'Image promotion (merge of the dev bump PR): GitHub calls from the merge until Escalator is idle, by job'
        : 'Configuration promotion (merge of a person’s PR changing LOG_LEVEL in dev): GitHub calls from the merge until Escalator is idle, by job',
    );
    printPromotionCalls(samples[kind]);
  }
  console.log('');
  console.log('Ratio configuration / image, mean calls per promotion');
  const ratio = (label: string, of: (s: PromotionSample) => number) => {
    const image = mean(samples.image.map(of));
    const configuration = mean(samples.config.map(of));
    console.log(
      `  ${label.padEnd(44)} ${configuration.toFixed(1).padStart(5)} / ${image.toFixed(1).padStart(5)} = ${
        image === 0 ? (configuration === 0 ? '—' : '∞') : (configuration / image).toFixed(2)
      }`,
    );
  };
  for (const [job, label] of promotionJobs) ratio(label, (s) => countCalls(s, job));
  ratio('promotion total (all but the diff)', promotionCalls);
  ratio('all calls after the merge', (s) => s.calls.length);
} finally {
  await stack.close();
}
console.log(`done ${new Date().toISOString()}  load average ${loadavg()}`);
