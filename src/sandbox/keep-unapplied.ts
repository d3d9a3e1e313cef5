import { closeSync, constants, mkdirSync, openSync, writeSync } from 'node:fs';
import { at, closeHeld, openFolderAt, openFolderPath, type Held } from './fd-at.js';

/** The folder, among a call's files, that holds what a failed run would have written to the workspace. */
export const UNAPPLIED_FOLDER = 'workspace-changes';

/**
 * Keeps the files a failed run wrote to its workspace copy as the call's files (`<files>/workspace-changes/<path>`),
 * so they stay readable while nothing reaches the workspace. The files folder was the script's: it is opened
 * through real folders only, and the folder is made anew (a script that made one itself gets none kept). Runs after
 * every process of the run has exited. Returns undefined when nothing can be kept.
 */
export function createKeeper(filesDir: string): ((rel: string, content: Buffer) => void) | undefined {
  const files = openFolderPath(filesDir);
  if (files === undefined) return undefined;
  let top: Held | undefined;
  try {
    mkdirSync(at(files.fd, UNAPPLIED_FOLDER), 0o755);
    top = openFolderAt(files.fd, UNAPPLIED_FOLDER);
  } catch {
    top = undefined;
  } finally {
    closeHeld(files);
  }
  if (top === undefined) return undefined;
  const root = top;
  return (rel, content) => {
    const parts = rel.split('/');
    const name = parts.pop()!;
    const held: Held[] = [];
    try {
      let cur = root;
      for (const p of parts) {
        let next = openFolderAt(cur.fd, p);
        if (next === undefined) {
          mkdirSync(at(cur.fd, p), 0o755);
          next = openFolderAt(cur.fd, p);
        }
        if (next === undefined) return;
        held.push(next);
        cur = next;
      }
      const fd = openSync(
        at(cur.fd, name),
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o644,
      );
      try {
        for (let off = 0; off < content.length;) off += writeSync(fd, content, off, content.length - off);
      } finally {
        closeSync(fd);
      }
    } catch {
      // Best effort: the result still lists the change.
    } finally {
      for (const h of held) closeHeld(h);
    }
  };
}
