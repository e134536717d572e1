import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    // The product's tests, and those of its workspace packages (packages/github-sandbox).
    include: ['test/**/*.test.ts', 'packages/*/test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 180_000,
    // Integration tests share one Redis and real git repositories on disk; two cores.
    pool: 'forks',
    maxWorkers: 2,
  },
});
