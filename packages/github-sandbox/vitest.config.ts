import { defineConfig } from 'vitest/config';

/** `npm test` in this folder; the product's vitest.config.ts runs the same files from the root. */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    pool: 'forks',
    maxWorkers: 2,
  },
});
