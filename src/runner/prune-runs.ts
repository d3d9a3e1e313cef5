import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

const CALL_FOLDER = /^skills-mcp-out-/;

/** Removes call folders under `runsDir` last changed before `cutoffMs`; returns the names removed (or, dry, found). */
export function pruneRuns(runsDir: string, cutoffMs: number, opts: { dryRun?: boolean } = {}): string[] {
  let names: string[];
  try {
    names = readdirSync(runsDir);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!CALL_FOLDER.test(name)) continue;
    const path = join(runsDir, name);
    try {
      const st = lstatSync(path);
      if (!st.isDirectory() || st.mtimeMs >= cutoffMs) continue;
      if (opts.dryRun !== true) rmSync(path, { recursive: true, force: true });
      removed.push(name);
    } catch {
      // Gone meanwhile, or not ours to remove: skip it.
    }
  }
  return removed;
}
