import { chmodSync, lstatSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { EnvSpec } from './env-spec.js';

/** What `<envs>/<id>/env.json` records about a built environment. */
export interface EnvManifest {
  id: string;
  spec: EnvSpec;
  /** Installed distributions, `name==version`, sorted. */
  installed: string[];
  /** ISO time of the build. */
  built: string;
}

const ID = /^[0-9a-f]{64}$/;
/** Folders builds happen in (they become `<id>` by one rename, or are left over by a crash). */
export const BUILD_PREFIX = 'skills-mcp-out-';

export const envDir = (envsDir: string, id: string): string => join(envsDir, id);

/**
 * The manifest of a built environment, or undefined when there is none. A folder named after its id exists only once
 * complete (it is renamed into place), so a crash mid-build can never leave one that looks ready.
 */
export function readManifest(envsDir: string, id: string): EnvManifest | undefined {
  try {
    const m = JSON.parse(readFileSync(join(envDir(envsDir, id), 'env.json'), 'utf8')) as EnvManifest;
    return m.id === id ? m : undefined;
  } catch {
    return undefined;
  }
}

/** Built environments and leftover build folders in `envsDir`. */
export function listEnvs(envsDir: string): { built: EnvManifest[]; leftovers: string[] } {
  let names: string[];
  try {
    names = readdirSync(envsDir);
  } catch {
    return { built: [], leftovers: [] };
  }
  const built: EnvManifest[] = [];
  const leftovers: string[] = [];
  for (const n of names.sort()) {
    if (n.startsWith(BUILD_PREFIX)) leftovers.push(n);
    else if (ID.test(n)) {
      const m = readManifest(envsDir, n);
      if (m === undefined) leftovers.push(n);
      else built.push(m);
    }
  }
  return { built, leftovers };
}

/** Removes a folder made read-only by sealing (write bits back on first, links never followed). */
export function removeTree(p: string): void {
  const walk = (x: string) => {
    const st = lstatSync(x, { throwIfNoEntry: false });
    if (st?.isDirectory() !== true) return;
    try {
      chmodSync(x, 0o700);
    } catch {
      // Not ours to change (another user's folder): rmSync says whether it can go.
    }
    for (const e of readdirSync(x)) walk(join(x, e));
  };
  walk(p);
  rmSync(p, { recursive: true, force: true });
}
