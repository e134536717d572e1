import { defineConfig } from 'vitest/config';
import { WaitingFirstSequencer } from './test/support/sequencer.js';

export default defineConfig({
  test: {
    // The product's tests, and those of its workspace packages (packages/github-sandbox).
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // Integration tests share one Redis (each under its own key prefix) and real git repositories
    // on disk. Two cores, but the files that boot the product mostly wait on jobs and webhooks
    // (about a quarter of a core each): a third worker keeps both cores busy.
    pool: 'forks',
    maxWorkers: 3,
    sequence: { sequencer: WaitingFirstSequencer },
  },
});
