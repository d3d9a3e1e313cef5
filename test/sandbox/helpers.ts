import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { silentLogger } from '../../src/log.js';
import { createSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/create-sandbox.js';
import type { SandboxLimits, SandboxPlan } from '../../src/sandbox/types.js';
import { tempDir } from '../helpers/temp-dir.js';

export const isLinux = process.platform === 'linux';
export const isRoot = process.getuid?.() === 0;

export const LIMITS: SandboxLimits = {
  wallTimeMs: 20_000,
  cpuSeconds: 10,
  memoryMiB: 512,
  pids: 128,
  tmpfsMiB: 32,
  fileSizeMiB: 32,
  maxOutputBytes: 1_048_576,
  openFiles: 128,
  allowSpawn: true,
};

/** Temp folders made by a test (the shared temp folder helper), removed by `cleanup()`. */
export function tempDirs() {
  const made: Array<() => void> = [];
  return {
    async make(prefix = 'skills-mcp-test-', mode = 0o755): Promise<string> {
      const t = tempDir(prefix);
      made.push(t.cleanup);
      await chmod(t.dir, mode);
      return t.dir;
    },
    cleanup(): Promise<void> {
      for (const remove of made.splice(0)) remove();
      return Promise.resolve();
    },
  };
}

export type PlanInput = Partial<Omit<SandboxPlan, 'limits'>> &
  Pick<SandboxPlan, 'argv'> & { limits?: Partial<SandboxLimits> };

export function plan(p: PlanInput): SandboxPlan {
  return {
    cwd: '/tmp',
    env: {},
    readOnlyPaths: [],
    writablePaths: [],
    network: 'none',
    profile: 'default',
    ...p,
    limits: { ...LIMITS, ...p.limits },
  };
}

export function newSandbox(o: Partial<SandboxOptions> = {}): Sandbox {
  return createSandbox({ log: silentLogger(), env: process.env, ...o });
}

export const text = (b: Buffer) => b.toString('utf8');

/** Whether a process `pid` exists (signal 0 sends nothing). */
export const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Every process's pid and command line, from /proc (those gone since the listing are skipped). */
export function processes(): { pid: number; argv: string[] }[] {
  const found: { pid: number; argv: string[] }[] = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      found.push({ pid: Number(name), argv: readFileSync(`/proc/${name}/cmdline`, 'utf8').split('\0') });
    } catch {
      // gone since the listing
    }
  }
  return found;
}

/** Pids whose command line is exactly `argv`. */
export const pidsRunning = (argv: readonly string[]): number[] =>
  processes()
    .filter((p) => p.argv.join('\0') === `${argv.join('\0')}\0`)
    .map((p) => p.pid);

/** The parent of process `pid`, from /proc (undefined once it is gone). */
export function parentOf(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/** Whether one of `ancestors` is an ancestor of process `pid`. */
export function isBelow(pid: number, ancestors: readonly number[]): boolean {
  for (let p = parentOf(pid); p !== undefined && p > 1; p = parentOf(p))
    if (ancestors.includes(p)) return true;
  return false;
}

/**
 * Writes, in `dir`, the skill `sleeper` (its script sleeps for its input's `seconds`, a string of digits: a test
 * finds the script by its command line, `sleep <seconds>`) and a config allowing it; returns the server's arguments
 * with an audit log in `dir`.
 */
export function sleeperFixture(dir: string): { args: string[]; audit: string } {
  const skills = join(dir, 'skills');
  mkdirSync(join(skills, 'sleeper', 'scripts'), { recursive: true, mode: 0o755 });
  writeFileSync(
    join(skills, 'sleeper', 'SKILL.md'),
    '---\nname: sleeper\ndescription: Sleeps. Use in tests.\nentry_point: scripts/main.sh\ninput_schema:\n' +
      '  type: object\n  properties:\n    seconds: { type: string, pattern: "^[0-9]+(\\\\.[0-9]+)?$" }\n' +
      '  required: [seconds]\n---\n\nSleeps.\n',
    { mode: 0o644 },
  );
  writeFileSync(
    join(skills, 'sleeper', 'scripts', 'main.sh'),
    '#!/bin/bash\nexec sleep "$(sed -E \'s/.*"seconds": *"([0-9.]+)".*/\\1/\')"\n',
    { mode: 0o755 },
  );
  const config = join(dir, 'skills-mcp.yaml');
  writeFileSync(
    config,
    'approval:\n  mode: allow\n  fallback: rules-only\n  rules:\n    - { skill: sleeper, action: allow }\n',
  );
  const audit = join(dir, 'audit.db');
  return { audit, args: ['--skills', skills, '--config', config, '--audit', audit] };
}
