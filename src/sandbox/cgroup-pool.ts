import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { mkdir, readFile, readdir, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isProcessAlive } from '../is-process-alive.js';
import type { Logger } from '../log.js';
import type { CgroupSupport } from './detect-cgroups.js';

/** One run's cgroup. */
export interface CgroupLease {
  /** `cgroup.procs` files a process writes its own pid to, to join (one per hierarchy). */
  procsFiles: string[];
  setLimits(memoryBytes: number, pids: number): Promise<void>;
  /** True when the kernel OOM-killed something in this cgroup. */
  oomKilled(): Promise<boolean>;
  /**
   * SIGKILLs whatever is left inside (processes this run started) and removes the cgroup. Callers need not
   * wait: `dispose` does.
   */
  release(): Promise<void>;
}

export interface CgroupPool {
  take(): Promise<CgroupLease>;
  dispose(): Promise<void>;
}

type Usable = Exclude<CgroupSupport, { kind: 'none' }>;

const PREFIX = 'skills-mcp-';

async function pidsIn(dir: string): Promise<number[]> {
  const text = await readFile(join(dir, 'cgroup.procs'), 'utf8').catch(() => '');
  return text
    .split('\n')
    .filter((l) => l !== '')
    .map(Number);
}

/** Kills the processes inside `dirs` (by pid: they are this run's) until empty, then removes the dirs. */
async function drainAndRemove(dirs: string[]): Promise<void> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const pids = (await Promise.all(dirs.map(pidsIn))).flat();
    if (pids.length === 0) break;
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
    await sleep(20);
  }
  for (const d of dirs) await rmdir(d).catch(() => undefined);
}

/**
 * Removes leftovers of servers that died without cleaning up (`skills-mcp-<pid>-*` with a dead pid), ending the
 * processes still in their run cgroups first: a server killed within a few ms of starting a sandbox can leave its
 * first process waiting forever for a bwrap that is gone, or the script itself running with no wall-clock limit
 * (bubblewrap arms `--die-with-parent` without checking that the parent is still there), and the launcher's stdio
 * helpers with them. Every process in those cgroups was started by that server.
 */
async function sweepStale(parents: string[]): Promise<void> {
  for (const parent of parents) {
    for (const name of await readdir(parent).catch(() => [] as string[])) {
      const m = /^skills-mcp-(\d+)-[0-9a-f]+$/.exec(name);
      if (m === null) continue;
      if (isProcessAlive(Number(m[1]))) continue;
      // Its server is dead: end what is left in its run cgroups, remove them, then it.
      const dir = join(parent, name);
      const runs = (await readdir(dir, { withFileTypes: true }).catch(() => []))
        .filter((child) => child.isDirectory())
        .map((child) => join(dir, child.name));
      await drainAndRemove(runs);
      await rmdir(dir).catch(() => undefined);
    }
  }
}

/**
 * Pre-creates a few per-run cgroups so creating them stays off the call path, and removes each one after
 * its run. Everything lives in `skills-mcp-<pid>-<rand>/` under the server's own cgroup.
 */
export async function createCgroupPool(support: Usable, log: Logger, size = 2): Promise<CgroupPool> {
  const parents = support.kind === 'v2' ? [support.dir] : [support.memoryDir, support.pidsDir];
  await sweepStale(parents);
  const group = `${PREFIX}${process.pid}-${randomBytes(4).toString('hex')}`;
  const roots = parents.map((p) => join(p, group));
  for (const r of roots) await mkdir(r);
  if (support.kind === 'v2') await writeFile(join(roots[0]!, 'cgroup.subtree_control'), '+memory +pids');

  let counter = 0;
  let disposed = false;
  const idle: string[][] = [];
  const live = new Set<string[]>();
  const pending = new Set<Promise<void>>();

  async function create(): Promise<string[]> {
    const name = `run-${++counter}`;
    const dirs = roots.map((r) => join(r, name));
    for (const d of dirs) await mkdir(d);
    return dirs;
  }
  function refill(): void {
    if (disposed || idle.length >= size) return;
    create()
      .then((d) => (disposed ? drainAndRemove(d) : void idle.push(d)))
      .catch((err: unknown) => log.warn({ err }, 'cgroup pre-creation failed'));
  }

  function lease(dirs: string[]): CgroupLease {
    const file = (i: number, f: string) => join(dirs[i]!, f);
    return {
      procsFiles: dirs.map((d) => join(d, 'cgroup.procs')),
      // On the call path, so synchronous: a few tiny cgroup file writes cost less than thread-pool round trips.
      setLimits(memoryBytes, pids) {
        const optional = (path: string, value: string) => {
          try {
            writeFileSync(path, value);
          } catch {
            // swap accounting is off on this kernel
          }
        };
        if (support.kind === 'v2') {
          writeFileSync(file(0, 'memory.max'), String(memoryBytes));
          optional(file(0, 'memory.swap.max'), '0');
          writeFileSync(file(0, 'pids.max'), String(pids));
        } else {
          writeFileSync(file(0, 'memory.limit_in_bytes'), String(memoryBytes));
          optional(file(0, 'memory.memsw.limit_in_bytes'), String(memoryBytes));
          writeFileSync(file(1, 'pids.max'), String(pids));
        }
        return Promise.resolve();
      },
      oomKilled() {
        const f = support.kind === 'v2' ? file(0, 'memory.events') : file(0, 'memory.oom_control');
        let text = '';
        try {
          text = readFileSync(f, 'utf8');
        } catch {
          // the cgroup is gone: nothing to report
        }
        const m = /^oom_kill (\d+)$/m.exec(text);
        return Promise.resolve(m !== null && Number(m[1]) > 0);
      },
      release() {
        live.delete(dirs);
        const p: Promise<void> = drainAndRemove(dirs)
          .then(refill)
          .finally(() => pending.delete(p));
        pending.add(p);
        return p;
      },
    };
  }

  for (let i = 0; i < size; i++) idle.push(await create());

  return {
    async take() {
      const dirs = idle.shift() ?? (await create());
      live.add(dirs);
      refill();
      return lease(dirs);
    },
    async dispose() {
      if (disposed) return;
      disposed = true;
      await Promise.all(pending);
      for (const d of [...idle.splice(0), ...live]) await drainAndRemove(d);
      for (const r of roots) await rmdir(r).catch(() => undefined);
    },
  };
}
