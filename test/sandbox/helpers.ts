import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { silentLogger } from '../../src/log.js';
import { createSandbox, type Sandbox, type SandboxOptions } from '../../src/sandbox/create-sandbox.js';
import type { SandboxLimits, SandboxPlan } from '../../src/sandbox/types.js';

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

/** Temp folders made by a test, removed by `cleanup()`. */
export function tempDirs() {
  const made: string[] = [];
  return {
    async make(prefix = 'skills-mcp-test-', mode = 0o755): Promise<string> {
      const d = await mkdtemp(join(tmpdir(), prefix));
      await chmod(d, mode);
      made.push(d);
      return d;
    },
    async cleanup(): Promise<void> {
      for (const d of made.splice(0)) await rm(d, { recursive: true, force: true });
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
