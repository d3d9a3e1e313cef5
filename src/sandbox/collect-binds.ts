import { lstatSync, realpathSync } from 'node:fs';
import { basename, dirname, join, relative } from 'node:path';
import { SkillsError } from '../errors.js';
import type { Bind } from './bwrap-args.js';
import { isUnder } from './host-layout.js';
import type { ResolvedInterpreter } from './resolve-interpreter.js';
import type { SandboxPlan } from './types.js';
import type { WorkspaceCopy } from './copy-workspace.js';

function source(p: string): string {
  try {
    return realpathSync(p);
  } catch (cause) {
    throw new SkillsError('SANDBOX_FAILED', `sandbox mount source does not exist: ${p}`, { cause });
  }
}

function realPathOrUndefined(p: string): string | undefined {
  try {
    return realpathSync(p);
  } catch {
    return undefined;
  }
}

/**
 * Every host path the run needs, as binds at the same path inside, parents first. Read-only wins ties. A workspace
 * with a private copy (`copy-workspace.ts`) is that copy, writable only when the run may write the workspace, with
 * the real `.git` read-only on top. Synchronous: a few path lookups on the call path, cheaper than thread-pool round
 * trips. Paths the workspace must hide, and the `node_modules` above each read-only path (`moduleCovers`), get an
 * empty read-only folder on top; a `package.json` above one gets `{}` (`emptyScope`, beside `emptyDir`).
 */
export function collectBinds(
  plan: SandboxPlan,
  interpreter: ResolvedInterpreter,
  systemDirs: readonly string[],
  workspaceCopy?: Pick<WorkspaceCopy, 'dir' | 'git'>,
  emptyDir?: string,
): Bind[] {
  const byDest = new Map<string, Bind>();
  const add = (dest: string, write: boolean) => {
    if (isUnder(dest, systemDirs)) return; // already visible read-only
    const prev = byDest.get(dest);
    if (prev !== undefined && !prev.write) return;
    byDest.set(dest, { src: source(dest), dest, write: prev === undefined ? write : false });
  };
  for (const m of interpreter.mounts) add(m, false);
  for (const p of plan.readOnlyPaths) add(p, false);
  if (plan.workspace !== undefined && workspaceCopy !== undefined) {
    const dest = plan.workspace.path;
    byDest.set(dest, { src: workspaceCopy.dir, dest, write: plan.workspace.write });
    // The folder the copy holds, by its fd: never resolved again by path, where a local user may swap it.
    if (workspaceCopy.git !== undefined)
      byDest.set(join(dest, '.git'), { src: workspaceCopy.git, dest: join(dest, '.git'), write: false });
  } else if (plan.workspace !== undefined) {
    add(plan.workspace.path, false);
  }
  if (plan.workspace?.emptyDir !== undefined) {
    const { path, emptyDir } = plan.workspace;
    const root = source(path);
    for (const h of plan.workspace.hide ?? []) {
      const real = realPathOrUndefined(h);
      if (real === undefined || real === root || !isUnder(real, [root])) continue;
      const dest = join(path, relative(root, real));
      byDest.set(dest, { src: source(emptyDir), dest, write: false });
    }
  }
  for (const p of plan.writablePaths) add(p, true);
  const covers = moduleCovers(plan.readOnlyPaths, [...byDest.values()], systemDirs, plan.workspace?.path);
  if (covers.length > 0 && emptyDir === undefined)
    throw new SkillsError('SANDBOX_FAILED', 'no empty folder to cover node_modules folders with');
  for (const dest of covers) {
    const src = basename(dest) === 'package.json' ? emptyScope(emptyDir!) : emptyDir!;
    byDest.set(dest, { src: source(src), dest, write: false });
  }
  return [...byDest.values()];
}

/** The `{}` package.json that covers one above a read-only path: beside the empty folder, made with it. */
export const emptyScope = (emptyDir: string): string => `${emptyDir}.package.json`;

/**
 * Node looks for a package in the `node_modules` of every folder above a script before `NODE_PATH`, and takes the
 * nearest `package.json` above it as the script's own package (its "name" and "exports" resolve a bare name before
 * any `node_modules`; its "type" and "imports" change how the script loads). Above a
 * read-only path (the verified bundle copy, the skill's environment) such a folder holds code no approval covered,
 * and may lie in the workspace or another folder a run can write. Returns the ones the sandbox would show (as their
 * bind's source has them now: the workspace copy for a run that has one), to be covered. A link named `node_modules`
 * cannot be covered (a mount lands where it points), so the run is refused, as it is when the workspace itself lies
 * in such a folder. A path's own `node_modules` and `package.json` (hashed with it) and anything a bind shows on
 * purpose stay visible.
 */
function moduleCovers(
  readOnlyPaths: readonly string[],
  binds: readonly Bind[],
  systemDirs: readonly string[],
  workspace?: string,
): string[] {
  const covers = new Set<string>();
  for (const p of readOnlyPaths) {
    for (let dir = dirname(p); ; dir = dirname(dir)) {
      const modules = join(dir, 'node_modules');
      if (workspace !== undefined && isUnder(workspace, [modules]))
        throw new SkillsError(
          'SANDBOX_FAILED',
          `the workspace lies in a node_modules folder above the skill: ${modules}`,
          {
            hint: 'Node would load packages from it. Configure a workspace outside it, or keep the server state folder elsewhere.',
          },
        );
      for (const dest of [modules, join(dir, 'package.json')]) {
        const holder = binds
          .filter((b) => b.dest !== dest && isUnder(dest, [b.dest]))
          .sort((a, b) => b.dest.length - a.dest.length)[0];
        const shown = binds.some((b) => isUnder(b.dest, [dest]));
        if (holder === undefined || shown || isUnder(dest, systemDirs)) continue;
        const st = lstatOrUndefined(join(holder.src, relative(holder.dest, dest)));
        if (st?.isSymbolicLink() === true)
          throw new SkillsError(
            'SANDBOX_FAILED',
            `a link named ${basename(dest)} lies above the skill: ${dest}`,
            {
              hint: 'Node would load code through it that no approval covered. Remove or rename it, or keep the server state folder out of the workspace.',
            },
          );
        if (dest === modules ? st?.isDirectory() === true : st?.isFile() === true) covers.add(dest);
      }
      if (dir === '/') break;
    }
  }
  return [...covers];
}

function lstatOrUndefined(p: string) {
  try {
    return lstatSync(p);
  } catch {
    return undefined;
  }
}
