import { randomBytes } from 'node:crypto';
import { lstatSync, readdirSync, renameSync } from 'node:fs';
import { join } from 'node:path';
import { isProcessAlive } from '../is-process-alive.js';
import { heldBundles } from './bundle-holds.js';
import { removeSealedTree } from './remove-sealed-tree.js';

export interface PruneBundlesOptions {
  /** Copies last used before this time (ms since the epoch) are removed. */
  cutoffMs: number;
  /** Bundles that pending approvals and live sessions refer to: kept. Asked only when some copy is old enough. */
  referenced?: () => ReadonlySet<string> | Promise<ReadonlySet<string>>;
  /** Only count what would be removed. */
  dryRun?: boolean;
}

export interface PrunedBundles {
  /** Hashes of the copies removed (or, dry, that would be). */
  removed: string[];
  /** Copies old enough but kept: a run uses them, or a live session refers to them. */
  kept: number;
}

const HEX64 = /^[0-9a-f]{64}$/;
/** Copies being made (`.tmp-`) or being removed (`.trash-`) by process `pid`. */
const WORK = /^\.(?:tmp|trash)-(\d+)-[0-9a-f]+$/;

/**
 * Removes the bundle copies under `root` not used since `cutoffMs`, except those a live process holds for a run or
 * `referenced` names, and what crashed copies and prunes left behind. A copy is first renamed away, then the holds
 * are read again: a run that took it meanwhile gets it back, and a call that looks it up after the rename makes a
 * new copy (verified like the first). Nothing a run is using is removed.
 */
export async function pruneBundles(root: string, opts: PruneBundlesOptions): Promise<PrunedBundles> {
  const result: PrunedBundles = { removed: [], kept: 0 };
  let names: string[];
  try {
    names = readdirSync(root);
  } catch {
    return result;
  }
  for (const name of names) {
    const m = WORK.exec(name);
    if (m !== null && !isProcessAlive(Number(m[1])) && opts.dryRun !== true)
      await removeSealedTree(join(root, name));
  }
  const old = names.filter((name) => {
    if (!HEX64.test(name)) return false;
    try {
      const st = lstatSync(join(root, name));
      return st.isDirectory() && st.mtimeMs < opts.cutoffMs;
    } catch {
      return false;
    }
  });
  if (old.length === 0) return result;
  const referenced = (await opts.referenced?.()) ?? new Set<string>();
  for (const sha of old) {
    // Synchronous from the check to the rename: a run of this process cannot take the copy in between.
    if (referenced.has(sha) || heldBundles(root).has(sha)) {
      result.kept++;
      continue;
    }
    if (opts.dryRun === true) {
      result.removed.push(sha);
      continue;
    }
    const dir = join(root, sha);
    const trash = join(root, `.trash-${process.pid}-${randomBytes(6).toString('hex')}`);
    try {
      renameSync(dir, trash);
    } catch {
      continue; // Gone meanwhile.
    }
    if (heldBundles(root).has(sha)) {
      // Another process took it between the check and the rename: put it back (or keep the copy it made since).
      try {
        renameSync(trash, dir);
      } catch {
        await removeSealedTree(trash);
      }
      result.kept++;
      continue;
    }
    await removeSealedTree(trash);
    result.removed.push(sha);
  }
  return result;
}
