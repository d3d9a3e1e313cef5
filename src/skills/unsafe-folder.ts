import { lstatSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * Why the folders a checkout is read through are unsafe to serve from, as `folder: what is wrong; the fix`, or
 * undefined. Each of `<state>/sources`, `sources/git` and the checkout that exists must be a real folder (lstat: no
 * link followed), owned by the server's user, and writable by no group or other user: else another local user could
 * swap its files between the check and the read.
 */
export function unsafeFolder(checkout: string, uid = process.getuid?.()): string | undefined {
  const git = dirname(checkout);
  for (const dir of [dirname(git), git, checkout]) {
    const st = lstatSync(dir, { throwIfNoEntry: false });
    if (st === undefined) continue;
    if (!st.isDirectory())
      return `${dir}: is not a folder (a link or a file): remove it, and the checkout is fetched again`;
    if (uid !== undefined && st.uid !== uid)
      return `${dir}: is owned by uid ${st.uid}, not by the server's user (uid ${uid}): another user could swap its files; \`chown -R ${uid} ${dir}\` or remove it`;
    if ((st.mode & 0o022) !== 0)
      return `${dir}: is writable by its group or by others (mode ${(st.mode & 0o777).toString(8)}): another user could swap its files; \`chmod go-w ${dir}\``;
  }
  return undefined;
}
