import { defineConfig } from 'vitest/config';
import { WaitingFirstSequencer } from './test/support/sequencer.js';

/**
 * The files that boot the whole product (the sandbox launch, end to end, Cluster and product-level
 * security and intake tests): they mostly wait on jobs and webhooks, so more of them run at once.
 */
const e2e = [
  'test/newcomer/**/*.test.ts',
  'test/e2e/**/*.test.ts',
  'test/cluster/**/*.test.ts',
  'test/sandbox/**/*.test.ts',
  'test/security/**/*.test.ts',
  'test/intake/**/*.test.ts',
];
/** The pure core: planners, configuration, event parsing, golden files; no Redis, no network. */
const unit = [
  'test/planners/**/*.test.ts',
  'test/config/**/*.test.ts',
  'test/events/**/*.test.ts',
  'test/web/**/*.test.ts',
  'test/architecture/**/*.test.ts',
  'test/golden-*.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // Integration tests share one Redis (each under its own key prefix) and real git repositories
    // on disk; two cores.
    pool: 'forks',
    maxWorkers: 2,
    sequence: { sequencer: WaitingFirstSequencer },
    // Three projects, run as two groups one after the other (`npx vitest run --project unit` runs one):
    // first e2e, three files at a time, since they mostly wait (CI runs lint and typecheck beside
    // them, .ci/run); then unit and integration together, two at a time, as the CPU-bound ones
    // need (the fuzzers' time bounds, test/fuzz/content.test.ts at 10 s a call, broke under a
    // third worker).
    projects: [
      {
        extends: true,
        test: { name: 'e2e', include: e2e, maxWorkers: 3, sequence: { groupOrder: 0 } },
      },
      {
        extends: true,
        // Pure tests share a worker's modules (no mocks, no module state): no reload per file.
        test: { name: 'unit', include: unit, isolate: false, sequence: { groupOrder: 1 } },
      },
      {
        extends: true,
        test: {
          name: 'integration',
          // The rest of the product's tests, and those of its workspace packages (packages/github-sandbox).
          include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
          exclude: [...e2e, ...unit, '**/node_modules/**'],
          sequence: { groupOrder: 1 },
        },
      },
    ],
  },
});
