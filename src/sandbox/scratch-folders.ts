import { lstat, mkdtemp, readdir, rmdir, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { isProcessAlive } from '../is-process-alive.js';

/**
 * This process's pid namespace (the inode of `/proc/self/ns/pid`): a pid tells whether its server is alive only
 * within its own namespace (a container sharing the parent folder has another).
 */
async function pidNamespace(): Promise<string | undefined> {
  try {
    return String((await stat('/proc/self/ns/pid')).ino);
  } catch {
    return undefined;
  }
}

/**
 * Makes `<parent>/<prefix><pid>-<pid namespace>-XXXXXX`, a folder of this server's, after removing the ones servers
 * that died without cleaning up left there (a server killed with SIGKILL cannot). A leftover is only ever an empty
 * folder, with for some prefixes a file beside it (`besideOf(folder)`): both are removed only when they are this
 * user's, of that type, and their pid is gone from this pid namespace, and never recursively, so nothing else in a
 * shared folder is touched. Without a pid namespace to read, nothing is removed.
 */
export async function makeScratchFolder(
  parent: string,
  prefix: string,
  besideOf?: (folder: string) => string,
): Promise<string> {
  const uid = process.getuid?.();
  const ns = await pidNamespace();
  const pattern = new RegExp(`^${prefix.replace(/[-.]/g, '\\$&')}(\\d+)-(\\d+)-[A-Za-z0-9]{6}$`);
  for (const name of ns === undefined ? [] : await readdir(parent).catch(() => [] as string[])) {
    const m = pattern.exec(name);
    if (m === null || m[2] !== ns || isProcessAlive(Number(m[1]))) continue;
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
  return mkdtemp(join(parent, `${prefix}${process.pid}-${ns ?? 'x'}-`));
}
