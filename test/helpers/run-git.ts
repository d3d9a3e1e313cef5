import { execFileSync } from 'node:child_process';

/** Runs the real git in `cwd` with no user or system config, and returns what it printed, trimmed. */
export const runGit = (cwd: string, args: string[]): string =>
  execFileSync('git', args, {
    cwd,
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_CONFIG_GLOBAL: '/dev/null',
      GIT_CONFIG_NOSYSTEM: '1',
    },
    encoding: 'utf8',
  }).trim();
