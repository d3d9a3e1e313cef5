import { open, type FileHandle } from 'node:fs/promises';
import type { Logger } from '../log.js';
import type { CgroupLease, CgroupPool } from './cgroup-pool.js';
import { launcherSpec } from './launcher.js';
import { prepareChild, type ChildDeps, type PreparedChild } from './run-child.js';
import { preStage, type PreStage } from './stage-mounts.js';

/** A waiting launcher, the cgroup it already sits in (when cgroups are used), what it pre-staged (root only). */
export interface Launcher {
  child: PreparedChild;
  lease?: CgroupLease;
  stage?: PreStage;
}

/** Who the launcher runs as: the server itself, or (root servers) the sandbox user. */
export type LauncherIdentity = { uid: number; gid: number } | undefined;

export interface LauncherPool {
  /** A ready launcher (spawned ahead of time) running as `as`, or a fresh one when none is ready. */
  take(as: LauncherIdentity): Promise<Launcher>;
  /**
   * The ready pre-staged root launcher, when `use` can run the call on its pre-stage (returns what it derived);
   * otherwise undefined, and a launcher that `use` turned down is discarded.
   */
  takeStaged<T>(use: (ps: PreStage) => T | undefined): { launcher: Launcher; value: T } | undefined;
  /**
   * Asks for a pre-staged root launcher that also covers `roots` (folder → writable), from the next housekeeping
   * on. The folders add up over calls (at most {@link MAX_STAGE_ROOTS}).
   */
  wantStaged(bwrap: string, dir: string, roots: ReadonlyMap<string, boolean>): void;
  /** Spawns now what is wanted and not ready (ahead of a first run, rather than after the last). */
  refill(): void;
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
export const MAX_STAGE_ROOTS = 16;

/** A kind of launcher the pool keeps ready: who it runs as, and (root only) what it pre-stages. */
interface Flavor {
  as: LauncherIdentity;
  stage?: { bwrap: string; ps: PreStage };
}

const keyOf = (as: LauncherIdentity) => (as === undefined ? 'self' : `${as.uid}:${as.gid}`);
const STAGED = 'staged';

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
  /** Every identity asked for so far (at most two: the server itself and the sandbox user), and the pre-stage. */
  const wanted = new Map<string, Flavor>([[keyOf(o.initial), { as: o.initial }]]);
  let disposed = false;
  /** Leases of finished runs, released at the next housekeeping. */
  const spent: CgroupLease[] = [];
  let housekeeping: NodeJS.Timeout | undefined;

  async function spawnOne({ as, stage }: Flavor): Promise<Launcher> {
    const lease = await o.cgroups?.take();
    const handles: FileHandle[] = [];
    try {
      // Without cgroups the launcher's "join" writes go to /dev/null (never to whatever fd 3 might be).
      for (const f of lease?.procsFiles ?? ['/dev/null']) handles.push(await open(f, 'w'));
      const fds = handles.map((h) => h.fd);
      const child = prepareChild({ ...launcherSpec([fds[0]!, fds.at(-1)!], stage), ...(as ?? {}) }, o.deps);
      return {
        child,
        ...(lease === undefined ? {} : { lease }),
        ...(stage === undefined ? {} : { stage: stage.ps }),
      };
    } catch (err) {
      if (lease !== undefined) void lease.release();
      throw err;
    } finally {
      // The child has its own copies now; the launcher is ready without waiting for ours to close.
      for (const h of handles) void h.close().catch(() => undefined);
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
    for (const [key, flavor] of wanted) {
      const have = () =>
        idle.filter((l) => l.key === key).length + [...pending.values()].filter((k) => k === key).length;
      while (!disposed && have() < size) {
        const p: Promise<void> = spawnOne(flavor)
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
    takeStaged(use) {
      const i = idle.findIndex((l) => l.key === STAGED && l.child.isAlive());
      if (i < 0) return undefined;
      const launcher = idle.splice(i, 1)[0]!;
      const value = launcher.stage === undefined ? undefined : use(launcher.stage);
      if (value !== undefined) return { launcher, value };
      discard(launcher);
      return undefined;
    },
    wantStaged(bwrap, dir, roots) {
      const had = new Map(wanted.get(STAGED)?.stage?.ps.roots.map((r) => [r.src, r.write]));
      const union = new Map(had);
      for (const [src, write] of roots) union.set(src, union.get(src) === true || write);
      if (union.size === had.size && [...union].every(([src, write]) => had.get(src) === write)) return;
      let ps: PreStage;
      try {
        ps = preStage(dir, union.size > MAX_STAGE_ROOTS ? roots : union);
      } catch (err) {
        return o.log.debug({ err }, 'cannot pre-stage a launcher');
      }
      wanted.set(STAGED, { as: undefined, stage: { bwrap, ps } });
      // Launchers staged for the old set are replaced at the next housekeeping.
      for (const l of idle.filter((x) => x.key === STAGED)) {
        idle.splice(idle.indexOf(l), 1);
        discard(l);
      }
    },
    refill,
    async take(as) {
      const key = keyOf(as);
      wanted.set(key, { as });
      const i = idle.findIndex((l) => l.key === key && l.child.isAlive());
      const ready = i < 0 ? undefined : idle.splice(i, 1)[0];
      return ready ?? (await spawnOne({ as }));
    },
    async dispose() {
      disposed = true;
      clearTimeout(housekeeping);
      await Promise.all([...spent.splice(0).map((l) => l.release()), ...pending.keys()]);
      for (const l of idle.splice(0)) discard(l);
    },
  };
}
