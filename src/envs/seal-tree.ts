import { chmodSync, lchownSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/**
 * Makes a finished build immutable before it is renamed into place: every folder 0555, every file 0444 (0555 when
 * executable), owned by the server when it is root (so the sandbox user, who ran the installer, cannot change it
 * back). Links are never followed: the tree was written by an installer and is hostile. Returns the file count.
 */
export function sealTree(root: string, owner?: { uid: number; gid: number }): number {
  let files = 0;
  const walk = (p: string) => {
    const st = lstatSync(p);
    if (owner !== undefined) lchownSync(p, owner.uid, owner.gid);
    if (st.isSymbolicLink()) return;
    if (st.isDirectory()) {
      for (const e of readdirSync(p)) walk(join(p, e));
      chmodSync(p, 0o555);
      return;
    }
    files++;
    chmodSync(p, st.isFile() && (st.mode & 0o111) !== 0 ? 0o555 : 0o444);
  };
  walk(root);
  return files;
}
