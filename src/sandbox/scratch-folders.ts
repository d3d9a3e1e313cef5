import { lstat, mkdtemp, readdir, rmdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';

/** Whether process `pid` exists (EPERM: it does, owned by someone else). */
function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code !== 'ESRCH';
  }
}

/**
 * Makes `<parent>/<prefix><pid>-XXXXXX`, a folder of this server's, after removing the ones servers that died
 * without cleaning up left there (a server killed with SIGKILL cannot). A leftover is only ever an empty folder,
 * with for some prefixes a file beside it (`besideOf(folder)`): both are removed only when they are this user's, of
 * that type, and their pid is gone, and never recursively, so nothing else in a shared folder is touched.
 */
export async function makeScratchFolder(
  parent: string,
  prefix: string,
  besideOf?: (folder: string) => string,
): Promise<string> {
  const uid = process.getuid?.();
  const pattern = new RegExp(`^${prefix.replace(/[-.]/g, '\\$&')}(\\d+)-[A-Za-z0-9]{6}$`);
  for (const name of await readdir(parent).catch(() => [] as string[])) {
    const m = pattern.exec(name);
    if (m === null || Number(m[1]) === process.pid || exists(Number(m[1]))) continue;
    const dir = join(parent, name);
    const mine = async (path: string, folder: boolean) => {
      const st = await lstat(path).catch(() => undefined);
      return (
        st !== undefined && (folder ? st.isDirectory() : st.isFile()) && (uid === undefined || st.uid === uid)
      );
    };
    const beside = besideOf?.(dir);
    if (beside !== undefined && (await mine(beside, false))) await unlink(beside).catch(() => undefined);
    if (await mine(dir, true)) await rmdir(dir).catch(() => undefined);
  }
  return mkdtemp(join(parent, `${prefix}${process.pid}-`));
}
