import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  opendirSync,
  readSync,
  realpathSync,
  type Stats,
} from 'node:fs';
import { SkillsError } from '../errors.js';

/**
 * Reading what a sandboxed script left behind, on the host, without following a single link it made.
 *
 * Everything under a call's output folder was made by the script: symlinks at any depth (`files/root -> /`), the
 * `files` folder itself swapped for a link, hard links, FIFOs, names with control characters. `O_NOFOLLOW` alone
 * protects only the last component of a path, so nothing here ever resolves more than one script-made component:
 *
 * - Linux: every step opens `/proc/self/fd/<parent fd>/<one name>` with `O_PATH | O_NOFOLLOW`. `/proc/self/fd/N`
 *   is a kernel-made link that lands on exactly the inode the fd holds (it is not re-resolved from a path), and
 *   the one name after it is looked up in that folder with `O_NOFOLLOW`: a symlink yields an fd for the link
 *   itself, never its target. This is `openat(dirfd, name, O_NOFOLLOW)`, which Node lacks. `O_PATH` opens
 *   nothing: a FIFO, socket or device node is only looked at (fstat), never opened, so it cannot block or act.
 *   Only a regular file with one link is then opened for reading, through its own `O_PATH` fd.
 * - macOS: each step opens the full real path with `O_NOFOLLOW_ANY`, which refuses a symlink in any component.
 * - The root is opened the same way and must have the device and inode recorded when the server created it, so
 *   a folder swapped for another one (or for a link) after creation is refused, not read.
 *
 * Hence: the server opens for reading only regular, single-link files reached from the folder it created
 * through real sub-folders. Every refusal names the reason.
 */
export interface FolderId {
  dev: number;
  ino: number;
}

/** Device and inode of a folder the server just created (lstat: a link is not a folder). */
export function folderIdOf(path: string): FolderId {
  const st = lstatSync(path);
  if (!st.isDirectory()) throw new SkillsError('PATH_INVALID', 'not a folder');
  return { dev: st.dev, ino: st.ino };
}

const LINUX = process.platform === 'linux';
/** Linux O_PATH (the same value on every architecture Node supports); Node does not export it. */
const O_PATH = 0o10000000;
/** macOS open(2): fail if any component of the path is a symlink (macOS 11+); Node does not export it. */
const O_NOFOLLOW_ANY = 0x20000000;
const LOOK = LINUX
  ? O_PATH | constants.O_NOFOLLOW
  : constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW | O_NOFOLLOW_ANY;

/** One node under the folder: an fd that only looks at it, and what it is. Close it. */
export interface Node {
  fd: number;
  st: Stats;
  /** macOS only: the real path it was opened by (Linux steps go through the fd). */
  path: string;
}

const via = (parent: Node, name: string) =>
  LINUX ? `/proc/self/fd/${parent.fd}/${name}` : `${parent.path}/${name}`;

function look(path: string): Node | 'symlink' | 'missing' {
  let fd: number;
  try {
    fd = openSync(path, LOOK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === 'ELOOP' || code === 'EMLINK' ? 'symlink' : 'missing';
  }
  return { fd, st: fstatSync(fd), path };
}

export const closeNode = (n: Node): void => closeSync(n.fd);

/** Opens a folder the server created, refusing a link or a different folder at that path. */
export function openFolder(path: string, expected: FolderId): Node {
  // The path up to the folder is the server's own (macOS: resolved first, /var is a link to /private/var); the
  // folder itself is checked by identity.
  const n = look(LINUX ? path : realpathSync(path));
  if (typeof n === 'string') throw new SkillsError('PATH_INVALID', `the folder is a ${n}`);
  if (!n.st.isDirectory() || n.st.dev !== expected.dev || n.st.ino !== expected.ino) {
    closeNode(n);
    throw new SkillsError('PATH_INVALID', 'the folder was replaced after the server created it');
  }
  return n;
}

/** One name inside `parent`, never following a link. Refuses names that are not a single component. */
export function openChild(parent: Node, name: string): Node | 'symlink' | 'missing' {
  if (name === '' || name === '.' || name === '..' || name.includes('/') || name.includes('\0'))
    return 'missing';
  const n = look(via(parent, name));
  if (typeof n !== 'string' && n.st.isSymbolicLink()) {
    closeNode(n);
    return 'symlink';
  }
  return n;
}

/**
 * Up to `max` names in a folder node (read through its fd), sorted; `more` when the folder holds others. Reads
 * entry by entry, so a folder of a million names costs `max` reads, not a million. Names that are not valid UTF-8
 * come back apart, as their raw bytes: decoded, two different names (`x\xFF`, `x\uFFFD`) would read as one, and
 * opening the decoded one would open the other file.
 */
export function listNames(dir: Node, max: number): { names: string[]; notUtf8: Buffer[]; more: boolean } {
  // Node reads names as bytes with `encoding: 'buffer'`; its types only list string encodings.
  const d = opendirSync(LINUX ? `/proc/self/fd/${dir.fd}` : dir.path, {
    encoding: 'buffer' as BufferEncoding,
  });
  const names: string[] = [];
  const notUtf8: Buffer[] = [];
  try {
    for (let e = d.readSync(); e !== null; e = d.readSync()) {
      if (names.length + notUtf8.length >= max) return { names: names.sort(), notUtf8, more: true };
      const raw = e.name as unknown as Buffer;
      const name = raw.toString('utf8');
      if (Buffer.from(name, 'utf8').equals(raw)) names.push(name);
      else notUtf8.push(raw);
    }
  } finally {
    d.closeSync();
  }
  return { names: names.sort(), notUtf8, more: false };
}

/** Why a node is not a file the server reads, or undefined when it is a regular file with one link. */
export function refusalOf(n: Node): string | undefined {
  if (n.st.isSymbolicLink()) return 'symlink';
  if (n.st.isDirectory()) return 'folder';
  if (!n.st.isFile()) return 'not a regular file';
  if (n.st.nlink !== 1) return 'hard link';
  return undefined;
}

/**
 * The content of a node that `refusalOf` accepted, in chunks of at most 1 MiB, at most `maxBytes` in all (a caller
 * may yield to the event loop between chunks). On Linux the `O_PATH` fd is reopened for reading through its own
 * `/proc/self/fd` entry, and must still be the same inode.
 */
export function* readChunks(n: Node, maxBytes: number): Generator<Buffer> {
  const fd = LINUX ? openSync(`/proc/self/fd/${n.fd}`, constants.O_RDONLY | constants.O_NONBLOCK) : n.fd;
  try {
    const st = fstatSync(fd);
    if (st.dev !== n.st.dev || st.ino !== n.st.ino || !st.isFile())
      throw new SkillsError('PATH_INVALID', 'the file changed while it was read');
    let got = 0;
    while (got < maxBytes) {
      const buf = Buffer.allocUnsafe(Math.min(CHUNK, maxBytes - got));
      const r = readSync(fd, buf, 0, buf.length, got);
      if (r === 0) break;
      got += r;
      yield buf.subarray(0, r);
    }
  } finally {
    if (LINUX) closeSync(fd);
  }
}

const CHUNK = 1 << 20;

/** The whole content of an accepted node, at most `maxBytes`. */
export const readNodeFully = (n: Node, maxBytes: number): Buffer =>
  Buffer.concat([...readChunks(n, maxBytes)]);
