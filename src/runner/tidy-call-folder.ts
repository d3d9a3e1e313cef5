import { lstatSync, readdirSync, rmSync } from 'node:fs';
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
