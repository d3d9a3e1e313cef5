import { lstatSync, realpathSync } from 'node:fs';
import { join } from 'node:path';
import { SkillsError } from '../errors.js';
import type { Bind } from './bwrap-args.js';
import { isUnder } from './host-layout.js';
import type { ResolvedInterpreter } from './resolve-interpreter.js';
import type { SandboxPlan } from './types.js';

/**
 * Inside a writable workspace these stay read-only when they exist: they run code later, outside the
 * sandbox (git hooks and config, shell rc files, direnv, editor task/launch settings). Symlinks among them
 * are not followed (binding one would expose its target); new files of these names can still be created.
 */
export const WORKSPACE_PROTECTED: readonly string[] = [
  '.git/hooks',
  '.git/config',
  '.gitmodules',
  '.envrc',
  '.bashrc',
  '.bash_profile',
  '.bash_login',
  '.profile',
  '.zshrc',
  '.zprofile',
  '.zshenv',
  '.vscode',
  '.idea',
  '.devcontainer',
];

function source(p: string): string {
  try {
    return realpathSync(p);
  } catch (cause) {
    throw new SkillsError('SANDBOX_FAILED', `sandbox mount source does not exist: ${p}`, { cause });
  }
}

/**
 * Every host path the run needs, as binds at the same path inside, parents first. Read-only wins ties. Synchronous:
 * a few path lookups on the call path, cheaper than thread-pool round trips.
 */
export function collectBinds(
  plan: SandboxPlan,
  interpreter: ResolvedInterpreter,
  systemDirs: readonly string[],
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
  if (plan.workspace !== undefined) {
    add(plan.workspace.path, plan.workspace.write);
    if (plan.workspace.write) {
      for (const rel of WORKSPACE_PROTECTED) {
        const p = join(plan.workspace.path, rel);
        const st = lstatSync(p, { throwIfNoEntry: false });
        if (st !== undefined && !st.isSymbolicLink()) add(p, false);
      }
    }
  }
  for (const p of plan.writablePaths) add(p, true);
  return [...byDest.values()];
}
