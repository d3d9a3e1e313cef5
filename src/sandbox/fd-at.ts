import { closeSync, constants, fstatSync, openSync, type BigIntStats } from 'node:fs';

/**
 * Folder-descriptor-relative file operations on Linux, which Node lacks (openat, mkdirat, renameat, unlinkat,
 * linkat, fstatat): `/proc/self/fd/<dirfd>/<name>` is looked up as `<name>` inside the very folder the fd holds (the
 * kernel's link for the fd lands on its inode, it is not resolved again from a path). `open` with `O_NOFOLLOW`, and
 * `mkdir`, `rename`, `unlink`, `link`, `lstat` and `readlink` on such a path act on the last component itself, never
 * following it when it is a link. A folder swapped for a link after it was opened changes nothing: the fd still
 * holds the folder. Used on the host side of a workspace copy, where a local user may swap anything at any time.
 */

/** Linux O_PATH (the same value on every architecture Node supports); Node does not export it. */
const O_PATH = 0o10000000;

/** A path naming `name` inside the folder `dirFd` holds. `name` must be one component (see `isName`). */
export const at = (dirFd: number, name: string): string => `/proc/self/fd/${dirFd}/${name}`;

/** One path component: not empty, `.` or `..`, without `/` or NUL, at most 255 bytes. */
export const isName = (name: string): boolean =>
  name !== '' &&
  name !== '.' &&
  name !== '..' &&
  !name.includes('/') &&
  !name.includes('\0') &&
  Buffer.byteLength(name) <= 255;

/** An open fd and what it held when opened. */
export interface Held {
  fd: number;
  st: BigIntStats;
}

const hold = (fd: number): Held => {
  try {
    return { fd, st: fstatSync(fd, { bigint: true }) };
  } catch (e) {
    closeSync(fd);
    throw e;
  }
};

/**
 * Looks at `name` in `dirFd` without opening it (`O_PATH | O_NOFOLLOW`): a link is held as the link, a FIFO or a
 * device is only looked at. `undefined` when there is no such entry.
 */
export function lookAt(dirFd: number, name: string): Held | undefined {
  try {
    return hold(openSync(at(dirFd, name), O_PATH | constants.O_NOFOLLOW));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
}

/**
 * Opens for reading the regular file or folder a `lookAt` fd holds, through that fd (never by name again), and
 * checks it is still the same inode. `undefined` for anything else (a link, FIFO, socket, device).
 */
export function openHeld(h: Held): Held | undefined {
  const folder = h.st.isDirectory();
  if (!folder && !h.st.isFile()) return undefined;
  const flags = constants.O_RDONLY | constants.O_NONBLOCK | (folder ? constants.O_DIRECTORY : 0);
  const r = hold(openSync(`/proc/self/fd/${h.fd}`, flags));
  if (r.st.dev !== h.st.dev || r.st.ino !== h.st.ino) {
    closeSync(r.fd);
    return undefined;
  }
  return r;
}

/** Opens the folder `name` in `dirFd` for reading, never through a link; `undefined` when it is not a folder. */
export function openFolderAt(dirFd: number, name: string): Held | undefined {
  let fd: number;
  try {
    fd = openSync(
      at(dirFd, name),
      constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ELOOP' || code === 'ENOTDIR') return undefined;
    throw e;
  }
  const h = hold(fd);
  if (!h.st.isDirectory()) {
    closeSync(fd);
    return undefined;
  }
  return h;
}

/**
 * Opens an absolute, already resolved folder path from `/`, one component at a time, never through a link: the fd
 * holds a folder reached only through real folders.
 */
export function openFolderPath(path: string): Held | undefined {
  let cur = hold(openSync('/', constants.O_RDONLY | constants.O_DIRECTORY));
  for (const part of path.split('/').filter((p) => p !== '')) {
    const next = isName(part) ? openFolderAt(cur.fd, part) : undefined;
    closeSync(cur.fd);
    if (next === undefined) return undefined;
    cur = next;
  }
  return cur;
}

export const closeHeld = (h: Held | undefined): void => {
  if (h !== undefined) closeSync(h.fd);
};
