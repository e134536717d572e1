import { defineConfig } from 'vitest/config';
import { WaitingFirstSequencer, productFolders } from './test/support/sequencer.js';

/** The files that boot the whole product (`test/support/sequencer.ts`), each in a fresh process. */
const product = productFolders.map((folder) => `${folder}**/*.test.ts`);

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
        // The files that boot the whole product, each in a fresh process: stacks, worker
        // processes and sandboxes leave nothing behind for the next file to meet.
        extends: true,
        test: { name: 'product', include: product },
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
