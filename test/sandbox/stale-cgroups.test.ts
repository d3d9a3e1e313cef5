import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createCgroupPool } from '../../src/sandbox/cgroup-pool.js';
import { detectCgroups } from '../../src/sandbox/detect-cgroups.js';

const support = await detectCgroups();
const usable = support.kind !== 'none' && process.getuid?.() === 0;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return spawnSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).stdout.trim()[0] !== 'Z';
  } catch {
    return false;
  }
};

describe.skipIf(!usable)('cgroups left by a server that died (needs root and cgroups here)', () => {
  it('ends the processes still in its run cgroups and removes the cgroups when the next server starts', async () => {
    if (support.kind === 'none') throw new Error('unreachable');
    // A pid that was just in use and is now gone stands for the dead server.
    const gone = spawnSync('true').pid;
    const parents = support.kind === 'v2' ? [support.dir] : [support.memoryDir, support.pidsDir];
    const stale = parents.map((p) => join(p, `skills-mcp-${gone}-0badcafe`));
    // A process stuck in a run cgroup, as a sandbox's first process waiting for a bwrap that was killed.
    const stuck = spawn('sleep', ['600'], { stdio: 'ignore', detached: true });
    try {
      for (const dir of stale) {
        mkdirSync(join(dir, 'run-3'), { recursive: true });
        writeFileSync(join(dir, 'run-3', 'cgroup.procs'), String(stuck.pid));
      }
      const exited = new Promise((r) => stuck.once('exit', (_code, signal) => r(signal)));
      const pool = await createCgroupPool(support, createLogger('silent'));
      await pool.dispose();
      expect(await exited).toBe('SIGKILL');
      expect(alive(stuck.pid!)).toBe(false);
      for (const dir of stale) expect(existsSync(dir)).toBe(false);
    } finally {
      if (stuck.exitCode === null && stuck.signalCode === null) stuck.kill('SIGKILL');
    }
  });
});
