import { defineConfig } from 'vitest/config';
import { WaitingFirstSequencer, productFolders } from './test/support/sequencer.js';

/** The files that boot the whole product (`test/support/sequencer.ts`). */
const product = productFolders.map((folder) => `${folder}**/*.test.ts`);
/**
 * Product files that assert on the process-wide metrics registry (src/observability/metrics.ts):
 * exact counts and the set of series, which another file's stack in the same process would add to.
 */
const freshProcess = ['test/security/refusal-flood.test.ts', 'test/security/metrics-labels.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // Integration tests share one Redis (each under its own key prefix) and real git repositories
    // on disk; two cores. A third worker was tried: the files that boot the product mostly wait,
    // but the fuzzers' time bounds (test/fuzz/content.test.ts, 10 s a call) broke under it.
    pool: 'forks',
    maxWorkers: 2,
    sequence: { sequencer: WaitingFirstSequencer },
    projects: [
      {
        // The files that boot the whole product share their worker's loaded modules too: each
        // closes the stacks, worker processes and sandboxes it starts, and the installations of
        // every sandbox in a process are numbered apart. Loading the product afresh for each of
        // these 64 files cost ~100 s of CPU in a run (measured: 347 → 251 s of user CPU alone).
        extends: true,
        test: { name: 'product', include: product, exclude: freshProcess, isolate: false },
      },
      {
        // The files above that count process-wide metrics, each in a fresh process.
        extends: true,
        test: { name: 'product-fresh', include: freshProcess },
      },
      {
        // Everything else (the product's modules and the simulator's, one at a time) shares
        // its worker's loaded modules from file to file: a fresh process per file took half of
        // these files' time (68 files of test/planners, config, events and cli: 98 s alone,
        // 47 s sharing). None of them mocks a module or changes process state for the next.
        extends: true,
        test: {
          name: 'modules',
          include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
          exclude: product,
          isolate: false,
        },
      },
    ],
  },
});
