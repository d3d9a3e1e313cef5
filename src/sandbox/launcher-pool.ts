import { open, type FileHandle } from 'node:fs/promises';
import type { Logger } from '../log.js';
import type { CgroupLease, CgroupPool } from './cgroup-pool.js';
import { launcherSpec } from './launcher.js';
import { prepareChild, type ChildDeps, type PreparedChild } from './run-child.js';

/** A waiting launcher and the cgroup it already sits in (when cgroups are used). */
export interface Launcher {
  child: PreparedChild;
  lease?: CgroupLease;
}

/** Who the launcher runs as: the server itself, or (root servers) the sandbox user. */
export type LauncherIdentity = { uid: number; gid: number } | undefined;

export interface LauncherPool {
  /** A ready launcher (spawned ahead of time) running as `as`, or a fresh one when none is ready. */
  take(as: LauncherIdentity): Promise<Launcher>;
  /**
   * A run on `launcher` (from `take`) ended. Its cgroup is released and a replacement is pre-spawned a moment
   * later, off the path of the call's answer: on cgroup v1 a new launcher's move into its cgroup stalls every
   * fork and exit on the machine for several ms.
   */
  done(launcher: Launcher): void;
  dispose(): Promise<void>;
}

/** How long after a run the pool waits before releasing its cgroup and pre-spawning a replacement. */
const HOUSEKEEPING_DELAY_MS = 25;

const keyOf = (as: LauncherIdentity) => (as === undefined ? 'self' : `${as.uid}:${as.gid}`);

/**
 * Keeps `size` launchers spawned and waiting for each identity asked for so far, each already inside its
 * own per-run cgroup, so a call only pays for bwrap and the script. An idle launcher holds no work: if the
 * server dies, its pipes close and the launcher exits.
 */
export function createLauncherPool(o: {
  cgroups?: CgroupPool;
  deps: ChildDeps;
  log: Logger;
  size?: number;
  initial?: LauncherIdentity;
}): LauncherPool {
  const size = o.size ?? 1;
  const idle: Array<Launcher & { key: string }> = [];
  const pending = new Map<Promise<void>, string>();
  /** Every identity asked for so far (at most two: the server itself and the sandbox user). */
  const wanted = new Map<string, LauncherIdentity>([[keyOf(o.initial), o.initial]]);
  let disposed = false;
  /** Leases of finished runs, released at the next housekeeping. */
  const spent: CgroupLease[] = [];
  let housekeeping: NodeJS.Timeout | undefined;

  async function spawnOne(as: LauncherIdentity): Promise<Launcher> {
    const lease = await o.cgroups?.take();
    const handles: FileHandle[] = [];
    try {
      // Without cgroups the launcher's "join" writes go to /dev/null (never to whatever fd 3 might be).
      for (const f of lease?.procsFiles ?? ['/dev/null']) handles.push(await open(f, 'w'));
      const fds = handles.map((h) => h.fd);
      const child = prepareChild({ ...launcherSpec([fds[0]!, fds.at(-1)!]), ...(as ?? {}) }, o.deps);
      return lease === undefined ? { child } : { child, lease };
    } catch (err) {
      if (lease !== undefined) void lease.release();
      throw err;
    } finally {
      // The child has its own copies now.
      for (const h of handles) await h.close().catch(() => undefined);
    }
  }

  function discard(l: Launcher): void {
    l.child.discard();
    if (l.lease !== undefined) void l.lease.release();
  }

  function refill(): void {
    for (const l of idle.filter((x) => !x.child.isAlive())) {
      idle.splice(idle.indexOf(l), 1);
      discard(l);
    }
    for (const [key, as] of wanted) {
      const have = () =>
        idle.filter((l) => l.key === key).length + [...pending.values()].filter((k) => k === key).length;
      while (!disposed && have() < size) {
        const p: Promise<void> = spawnOne(as)
          .then((l) => {
            if (disposed) discard(l);
            else idle.push({ ...l, key });
          })
          .catch((err: unknown) => o.log.warn({ err }, 'launcher pre-spawn failed'))
          .finally(() => pending.delete(p));
        pending.set(p, key);
      }
    }
  }

  function housekeep(): void {
    housekeeping = undefined;
    for (const lease of spent.splice(0)) void lease.release();
    refill();
  }

  refill();
  return {
    done(l) {
      if (disposed) return void l.lease?.release();
      if (l.lease !== undefined) spent.push(l.lease);
      // Not pushed back by later runs: under steady load the pool still refills within the delay.
      if (housekeeping === undefined) {
        housekeeping = setTimeout(housekeep, HOUSEKEEPING_DELAY_MS);
        housekeeping.unref();
      }
    },
    async take(as) {
      const key = keyOf(as);
      wanted.set(key, as);
      const i = idle.findIndex((l) => l.key === key && l.child.isAlive());
      const ready = i < 0 ? undefined : idle.splice(i, 1)[0];
      return ready ?? (await spawnOne(as));
    },
    async dispose() {
      disposed = true;
      clearTimeout(housekeeping);
      await Promise.all([...spent.splice(0).map((l) => l.release()), ...pending.keys()]);
      for (const l of idle.splice(0)) discard(l);
    },
  };
}
