import { realpathSync, statSync } from 'node:fs';
import type { BwrapHost } from './bwrap-probe.js';
import { launchersOf, type ExecuteContext } from './bwrap-execute.js';
import { isUnder } from './host-layout.js';
import type { ResolvedInterpreter } from './resolve-interpreter.js';
import { isReachableBy, perm, stageRootOf } from './stage-mounts.js';

/**
 * Root servers: asks the launcher pool to pre-stage, now, a launcher for runs of `interps` that bind folders inside
 * `parents` (folder → writable), as a first such run would for the next one (`chooseLauncher`), so that the first
 * run finds one ready. Returns the roots asked for (none when the sandbox user reaches everything, or the server is
 * not root). Spawns only the launcher: nothing of a skill runs.
 */
export async function prestageLaunchers(
  ctx: ExecuteContext,
  host: BwrapHost,
  interps: readonly ResolvedInterpreter[],
  parents: ReadonlyMap<string, boolean>,
): Promise<ReadonlyMap<string, boolean>> {
  const roots = new Map<string, boolean>();
  const bwrap = host.bwrap;
  if (!ctx.isRoot || bwrap === undefined || host.setpriv === undefined || !host.probe.healthy) return roots;
  const { uid, gid } = ctx.sandboxId;
  const add = (root: string, write: boolean) => roots.set(root, roots.get(root) === true || write);
  for (const m of interps.flatMap((i) => i.mounts)) {
    if (isUnder(m, host.layout.systemDirs)) continue;
    const src = realpathSync(m);
    if (!isReachableBy(src, uid, gid)) add(stageRootOf(src, uid, gid), false);
  }
  // A folder made in a parent the sandbox user may pass through, but not reach, is staged as that parent.
  for (const [dir, write] of parents) {
    const src = realpathSync(dir);
    const st = statSync(src);
    if (!isReachableBy(src, uid, gid) && perm(st.mode, uid, gid, st, 0o1)) add(src, write);
  }
  if (roots.size > 0) launchersOf(ctx, host).wantStaged(bwrap, await ctx.stageDir(), roots, { now: true });
  return roots;
}
