import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Two test files at a time even on a 2-core machine (vitest's default there is one): most of a file's time is
    // spent waiting on the processes it starts (servers, bubblewrap, PostgreSQL, HAProxy), so two overlap well.
    maxWorkers: 2,
  },
});
