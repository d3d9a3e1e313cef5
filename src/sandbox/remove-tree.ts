import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { rm } from 'node:fs/promises';

const RM = ['/usr/bin/rm', '/bin/rm'];

/**
 * Removes a folder a sandboxed script wrote, whatever its depth. GNU `rm -r` walks with openat/unlinkat from
 * directory fds, so a tree deeper than PATH_MAX is removed and a link is never followed; Node's `rm` builds full
 * paths and fails on such a tree, leaving it on the host's disk. Falls back to Node's `rm` without GNU rm.
 */
export async function removeTree(dir: string): Promise<void> {
  const bin = RM.find((p) => existsSync(p));
  if (bin === undefined) return rm(dir, { recursive: true, force: true });
  await new Promise<void>((resolve, reject) => {
    execFile(bin, ['-rf', '--one-file-system', '--', dir], { env: {} }, (err: Error | null) => {
      if (err === null) resolve();
      else reject(err);
    });
  });
}
