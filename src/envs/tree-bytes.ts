import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Bytes a folder takes on disk, counted without following a link: every entry counts its size or its allocated
 * blocks, whichever is larger, and at least 512 bytes (so a flood of empty files counts too). Stops counting once
 * past `stopAt`. Entries that vanish while counting are skipped: an installer is still writing.
 */
export function treeBytes(dir: string, stopAt = Number.POSITIVE_INFINITY): number {
  let total = 0;
  const walk = (p: string): void => {
    let names: string[];
    try {
      names = readdirSync(p);
    } catch {
      return;
    }
    for (const n of names) {
      if (total > stopAt) return;
      const child = join(p, n);
      const st = lstatSync(child, { throwIfNoEntry: false });
      if (st === undefined) continue;
      total += Math.max(st.size, st.blocks * 512, 512);
      if (st.isDirectory()) walk(child);
    }
  };
  walk(dir);
  return total;
}
