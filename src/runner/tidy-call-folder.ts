import { lstatSync, readdirSync, rmdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';

/** Bytes under `dir`, links counted as themselves (never followed); stops counting past `limit`. */
export function folderBytes(dir: string, limit = Infinity): number {
  let total = 0;
  const stack = [dir];
  while (stack.length > 0 && total <= limit) {
    const d = stack.pop()!;
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      continue;
    }
    for (const name of names) {
      const p = join(d, name);
      let st;
      try {
        st = lstatSync(p);
      } catch {
        continue;
      }
      total += st.size;
      if (st.isDirectory()) stack.push(p);
    }
  }
  return total;
}

/**
 * After a call: the call folder keeps only `files/` (the artifacts the client may read); the raw input
 * (`input.json`) goes too unless `keepInput`. With `emptyFiles` (the folder went over its quota), `files/` is emptied
 * as well. Never follows a link the script made (`rmSync` removes links, not their targets).
 */
export function tidyCallFolder(outDir: string, opts: { keepInput: boolean; emptyFiles: boolean }): void {
  const clear = (dir: string, keep: (name: string) => boolean) => {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) if (!keep(name)) rmSync(join(dir, name), { recursive: true, force: true });
  };
  clear(outDir, (name) => name === 'files' || (name === 'input.json' && opts.keepInput));
  if (opts.emptyFiles) clear(join(outDir, 'files'), () => false);
}

/**
 * At a call's end: a call folder left with nothing to keep (an empty `files/`, no kept input) is removed, so calls
 * that make no files leave no folder behind. Only `rmdir` is used: it removes an empty folder and nothing else,
 * never follows a link (a `files` the script swapped for a link fails with ENOTDIR, and stays), and fails on a
 * folder that holds anything. The call folder's own path is the server's (its parent is the runs folder, which no
 * sandbox writes). Returns whether the folder went.
 */
export function removeEmptyCallFolder(outDir: string): boolean {
  try {
    rmdirSync(join(outDir, 'files'));
    rmdirSync(outDir);
    return true;
  } catch {
    return false;
  }
}
