/**
 * How many times a crash-trial loop repeats (SIGKILL at a random point, restart, check nothing was lost).
 * `SKILLS_MCP_TEST_TRIALS=full` (CI's trials step) runs the full count the test names; anything else (a newcomer's
 * run, a single file while working) runs a quarter of it, at least 5: enough to exercise every path once.
 */
export function trials(full: number): number {
  return process.env.SKILLS_MCP_TEST_TRIALS === 'full'
    ? full
    : Math.min(full, Math.max(5, Math.ceil(full / 4)));
}
