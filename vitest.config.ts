import { defineConfig } from 'vitest/config';
import { WaitingFirstSequencer } from './test/support/sequencer.js';

export default defineConfig({
  test: {
    // The product's tests, and those of its workspace packages (packages/github-sandbox).
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // Integration tests share one Redis (each under its own key prefix) and real git repositories
    // on disk; two cores. A third worker was tried: the files that boot the product mostly wait,
    // but the fuzzers' time bounds (test/fuzz/content.test.ts, 10 s a call) broke under it.
    pool: 'forks',
    maxWorkers: 2,
    sequence: { sequencer: WaitingFirstSequencer },
  },
});
