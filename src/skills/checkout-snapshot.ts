import { createHash } from 'node:crypto';
import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Files changed this recently are not taken on their lstat: a second change could fall in the same clock tick. */
const SETTLE_NS = 2_000_000_000n;

/**
 * A digest of the lstat (device, inode, mode, owner, size, mtime and ctime in nanoseconds) of every entry under
 * `checkout`, `.git` included, and of each file of `also`; undefined when any of them changed in the last two seconds.
 * The kernel sets an entry's ctime to the current time on every change of its content or metadata, and no call lets a
 * user set it back; a file put in place of another has another inode; an entry added, removed or renamed changes its
 * folder's. So an equal digest, taken before a check that passed, means nothing under the checkout changed since.
 * The times of `.git/objects/` entries are left out (git touches the packs each check reads); their inode and size are
 * kept. The object store is never served: what is served are the checked-out files, each covered in full.
 */
export function checkoutSnapshot(
  checkout: string,
  also: readonly string[],
  nowNs = BigInt(Date.now()) * 1_000_000n,
): string | undefined {
  const hash = createHash('sha256');
  const add = (path: string, name: string): boolean => {
    const st = lstatSync(path, { bigint: true, throwIfNoEntry: false });
    if (st === undefined) return false;
    // git touches ("freshens") the object files each check finds again; the object store is never served.
    const times = name.startsWith('./.git/objects/') ? '' : `:${st.mtimeNs}:${st.ctimeNs}`;
    if (times !== '' && nowNs - st.ctimeNs < SETTLE_NS) return false;
    hash.update(`${name}\0${st.dev}:${st.ino}:${st.mode}:${st.uid}:${st.gid}:${st.size}${times}\n`);
    if (st.isDirectory())
      for (const entry of readdirSync(path).sort())
        if (!add(join(path, entry), `${name}/${entry}`)) return false;
    return true;
  };
  if (!add(checkout, '.')) return undefined;
  for (const [i, f] of also.entries()) if (!add(f, `also${i}`)) return undefined;
  return hash.digest('hex');
}
