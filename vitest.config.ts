import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// On node:sqlite, the tests' own `better-sqlite3` (which edits and inspects audit files) is the built-in driver too:
// on a Node whose ABI better-sqlite3 was not built for, it would not load.
const onNodeSqlite = process.env.SKILLS_MCP_AUDIT_SQLITE_DRIVER === 'node';

export default defineConfig({
  resolve: {
    alias: onNodeSqlite
      ? {
          'better-sqlite3': fileURLToPath(
            new URL('test/helpers/better-sqlite3-on-node-sqlite.ts', import.meta.url),
          ),
        }
      : {},
  },
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
