import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// On node:sqlite, the tests' own `better-sqlite3` (which edits and inspects audit files) is the built-in driver too:
// on a Node whose ABI better-sqlite3 was not built for, it would not load.
const onNodeSqlite = process.env.SKILLS_MCP_AUDIT_SQLITE_DRIVER === 'node';

// The tiers (docs/testing.md). A new test file lands in `e2e` unless it is listed below: `e2e` has everything
// (the built binary, bubblewrap, clients), so a file there never fails for want of a set-up step.

/** No build, no bubblewrap, no child servers: pure functions and in-memory objects. Seconds. */
const unit = [
  'test/audit/decision-mac.test.ts',
  'test/audit/default-audit-path.test.ts',
  'test/audit/model-text.test.ts',
  'test/audit/postgres-url.test.ts',
  'test/audit/record-queue.test.ts',
  'test/audit/seal-pending-view.test.ts',
  'test/console/request-guard.test.ts',
  'test/console/sign-in-cookie.test.ts',
  'test/display/**/*.test.ts',
  'test/gate/approval-key.test.ts',
  'test/gate/approval-message-order.test.ts',
  'test/gate/approval-request.test.ts',
  'test/gate/approval-schema.test.ts',
  'test/gate/bind-skill-call.test.ts',
  'test/gate/display-value.test.ts',
  'test/gate/gate-flow.test.ts',
  'test/gate/guard-resolved-profile.test.ts',
  'test/gate/guard.test.ts',
  'test/gate/match-rule.test.ts',
  'test/gate/operator-grants.test.ts',
  'test/gate/policy.test.ts',
  'test/gate/profile-grants-key.test.ts',
  'test/gate/refusal-message.test.ts',
  'test/gate/resolve-gate.test.ts',
  'test/gate/scan-scripts.test.ts',
  'test/gate/session-state.test.ts',
  'test/gate/unseen-answer-message.test.ts',
  'test/http/http-helpers.test.ts',
  'test/http/memory-reclaimer.test.ts',
  'test/mcp/memo-json-schema.test.ts',
  'test/mcp/result-json.test.ts',
  'test/runner/argv-limits.test.ts',
  'test/runner/explain-sandbox-failure.test.ts',
  'test/sandbox/workspace-frames.test.ts',
  'test/transport/check-token-profile.test.ts',
  'test/transport/jwt-claims.test.ts',
  'test/transport/line-framer.test.ts',
  'test/transport/sniff-message.test.ts',
];

/** The long SIGKILL crash-trial loops; their counts come from `test/helpers/trials.ts`. */
const trials = [
  'test/audit/crash-recovery.test.ts',
  'test/audit/postgres-writer-crash.test.ts',
  'test/envs/install-crash.test.ts',
  'test/runs/crash-recovery.test.ts',
  'test/team/team-replica-crash.test.ts',
];

/** A throwaway PostgreSQL (and HAProxy in front of replicas): the shared audit log and team state. */
const team = [
  'test/team/**/*.test.ts',
  'test/team-state/**/*.test.ts',
  'test/audit/cli-audit-postgres.test.ts',
  'test/audit/postgres-audit-log.test.ts',
];

/** The sandbox security suite, with its own results reporter (`npm run test:security`, `.ci/security.sh`). */
const security = ['test/security/**/*.test.ts'];

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
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
    // Two test files at a time even on a 2-core machine (vitest's default there is one): most of a file's time is
    // spent waiting on the processes it starts (servers, bubblewrap, PostgreSQL, HAProxy), so two overlap well.
    maxWorkers: 2,
    projects: [
      { extends: true, test: { name: 'unit', include: unit } },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/**/*.test.ts'],
          exclude: [...unit, ...trials, ...team, ...security],
        },
      },
      { extends: true, test: { name: 'team', include: team, exclude: trials } },
      { extends: true, test: { name: 'trials', include: trials } },
      { extends: true, test: { name: 'security', include: security } },
    ],
  },
});
