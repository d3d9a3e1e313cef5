import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  lchownSync,
  mkdirSync,
  openSync,
  symlinkSync,
  writeSync,
} from 'node:fs';
import { mkdtemp, realpath } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SkillsError } from '../errors.js';
import { closeHeld, isName, lookAt, openFolderPath, type Held } from './fd-at.js';
import { folderIdOf, type FolderId } from './output-folder.js';
import { removeTree } from './remove-tree.js';
import { spawnWorkspaceWorker, workerIdentity, type WorkspaceWorker } from './spawn-workspace-worker.js';

/**
 * A run that may write to the workspace works on a private copy of it, bound at the workspace's path inside; the
 * server then applies what changed, file by file (`apply-workspace-changes.ts`). Nothing the script does reaches
 * the host workspace directly: not a rename of `.git`, not a new `.git/commondir`, not a symlink. A run that only
 * reads a workspace folder the sandbox user may not open (a root server's mode-700 project) gets such a copy too,
 * bound read-only, and nothing is applied back.
 *
 * The copy holds the workspace's folders, regular files and symlinks (as they are, resolved inside the sandbox),
 * without any `.git`: the top-level `.git` folder is bound read-only over the copy instead, so git can read the
 * repository inside while nothing can rename or change it.
 */
export interface WorkspaceCopy {
  /** Real path of the host workspace. */
  root: string;
  /** The private copy. */
  dir: string;
  /** Device and inode of the copy's folder, to tell it from one swapped in later. */
  dirId: FolderId;
  /**
   * The host's `.git` folder to bind read-only at `<workspace>/.git`, when there is one: a `/proc/<pid>/fd/<fd>` path
   * to the folder this process holds (`gitFolder`), opened in the workspace folder without following a link. The
   * bind lands on that very folder: a `.git` swapped for a link since lands nowhere else.
   */
  git?: string;
  /** The fd behind `git`, held until the sandbox is gone (`releaseWorkspaceCopy`). */
  gitFolder?: Held | undefined;
  /** Every regular file copied, by POSIX relative path. */
  files: Map<string, CopiedFile>;
  /** Every symlink copied, and its target (never applied back). */
  links: Map<string, string>;
  /** Paths left out because the sandbox user could not read them on the host: never changed by a run. */
  leftOut: Set<string>;
  /**
   * The worker that made the copy, kept for the apply (one process per run, on the workspace folder as it was
   * copied). Whoever holds the copy ends it (`worker.done()`), applied or not.
   */
  worker: WorkspaceWorker;
}

/** A copied file: who it was on the host, and who its copy was, to tell what changed on either side. */
export interface CopiedFile {
  host: FileIdentity;
  copy: FileIdentity;
  mode: number;
  uid: number;
  gid: number;
}

export interface FileIdentity {
  ino: bigint;
  size: bigint;
  /** mtime on the host side; ctime (which no script can set) on the copy's side. */
  timeNs: bigint;
}

export const MAX_WORKSPACE_FILES = 20_000;
export const MAX_WORKSPACE_BYTES = 512 * 1024 * 1024;
const MAX_DEPTH = 64;

const tooLarge = (what: string) =>
  new SkillsError('SANDBOX_FAILED', `the workspace is too large to copy for this run (${what})`, {
    hint: `A run that writes the workspace, or reads a workspace folder the sandbox user may not open, works on a private copy (at most ${MAX_WORKSPACE_FILES} files, ${MAX_WORKSPACE_BYTES / 1024 / 1024} MiB). Configure a smaller workspace, let the skill only read it (workspace: read), or let the sandbox user open the folder.`,
  });

const TOO_LARGE: Record<string, string> = {
  deep: `deeper than ${MAX_DEPTH} folders`,
  entries: `more than ${MAX_WORKSPACE_FILES} entries`,
  bytes: `more than ${MAX_WORKSPACE_BYTES / 1024 / 1024} MiB`,
};

/** Below PATH_MAX (4096), for the host path and the copy's. */
const MAX_PATH_BYTES = 4000;

const bad = (why: string) => new Error(`the workspace worker sent ${why}`);

/** A relative path the worker names: clean components below a folder it already sent (or the top). */
function checkedRel(v: unknown, folders: ReadonlySet<string>, seen: Set<string>): string {
  if (typeof v !== 'string' || Buffer.byteLength(v) > MAX_PATH_BYTES) throw bad('a path out of bounds');
  const parts = v.split('/');
  if (!parts.every(isName)) throw bad('a path that is not relative');
  const parent = parts.slice(0, -1).join('/');
  if (parent !== '' && !folders.has(parent)) throw bad('a path outside the folders it sent');
  if (seen.has(v)) throw bad('a path twice');
  seen.add(v);
  return v;
}

const int = (v: unknown, max: number) => {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max) throw bad('a number out of bounds');
  return v;
};
const big = (v: unknown) => {
  if (typeof v !== 'string' || !/^\d{1,24}$/.test(v)) throw bad('a file identity out of bounds');
  return BigInt(v);
};

/**
 * Copies `workspace` into a fresh folder; `owner` (root servers) becomes the owner of everything in it. With
 * `onlyOpenTo`, entries that identity could not read on the host by their mode bits (files it may not read, folders
 * it may not list and enter) are left out and listed in `leftOut`: the copy then shows no more than the workspace
 * itself would to the sandbox user, and a writing run cannot change what it could not read. Paths in `hide` (and
 * everything below them: the server's private files) are left out too.
 *
 * The host side runs in a worker with the workspace owner's identity (`serve-workspace-worker.ts`), from the
 * workspace folder this process opened (from `/`, never through a link), never following a link below it; it
 * streams what it read, and this side writes the copy in a folder only it may enter until the copy is complete.
 * Linux only (it works through `/proc/self/fd`).
 */
export async function copyWorkspace(
  workspace: string,
  owner?: { uid: number; gid: number },
  onlyOpenTo?: { uid: number; gid: number },
  hide: readonly string[] = [],
): Promise<WorkspaceCopy> {
  const root = await realpath(workspace);
  const hidden = await Promise.all(hide.map((p) => realpath(p).catch(() => resolve(p))));
  const rootFolder = openFolderPath(root);
  if (rootFolder === undefined)
    throw new SkillsError('SANDBOX_FAILED', 'the workspace is not a folder reached without links', {
      hint: 'Configure the workspace by a path whose every component is a real folder.',
    });
  const dir = await mkdtemp(join(tmpdir(), 'skills-mcp-ws-'));
  const files = new Map<string, CopiedFile>();
  const links = new Map<string, string>();
  const leftOut = new Set<string>();
  const folders = new Set<string>();
  const seen = new Set<string>();
  const modes: Array<[string, number]> = [];
  let git = false;
  let gitFolder: Held | undefined;
  let entries = 0;
  let bytes = 0;
  const own = (p: string) => {
    if (owner !== undefined) lchownSync(p, owner.uid, owner.gid);
  };
  const worker = spawnWorkspaceWorker(
    rootFolder.fd,
    workerIdentity(Number(rootFolder.st.uid), process.getuid?.() ?? 0),
  );
  try {
    await worker.send({
      op: 'copy',
      hide: hidden.filter((h) => h.startsWith(`${root}/`)).map((h) => h.slice(root.length + 1)),
      ...(onlyOpenTo === undefined ? {} : { onlyOpenTo }),
      maxEntries: MAX_WORKSPACE_FILES,
      maxBytes: MAX_WORKSPACE_BYTES,
      maxDepth: MAX_DEPTH,
    });
    for (let f = await worker.next(); ; f = await worker.next()) {
      if (f === undefined) throw bad('no end');
      const h = f.header;
      if (++entries > MAX_WORKSPACE_FILES * 2 + 2) throw bad('too many records');
      if (h.t === 'end') break;
      if (h.t === 'error') throw tooLarge(TOO_LARGE[String(h.code)] ?? 'refused');
      if (h.t === 'git') {
        git = true;
        continue;
      }
      const rel = checkedRel(h.rel, folders, seen);
      const dest = join(dir, rel);
      if (h.t === 'left') {
        leftOut.add(rel);
      } else if (h.t === 'dir') {
        mkdirSync(dest, { mode: 0o700 });
        folders.add(rel);
        modes.push([dest, (int(h.mode, 0o7777) & 0o777) | 0o700]);
        own(dest);
      } else if (h.t === 'link') {
        const target = h.target;
        if (typeof target !== 'string' || target === '' || target.length > 4095 || target.includes('\0'))
          throw bad('a link target out of bounds');
        symlinkSync(target, dest);
        own(dest);
        links.set(rel, target);
      } else if (h.t === 'file') {
        bytes += f.body.length;
        if (bytes > MAX_WORKSPACE_BYTES) throw tooLarge(TOO_LARGE.bytes!);
        const mode = int(h.mode, 0o7777) & 0o777;
        const host = { ino: big(h.ino), size: big(h.size), timeNs: big(h.mtimeNs) };
        files.set(rel, {
          host,
          copy: writeCopy(dest, f.body, mode | 0o600, owner),
          mode,
          uid: int(h.uid, 2 ** 32),
          gid: int(h.gid, 2 ** 32),
        });
      } else throw bad('an unknown record');
    }
    for (const [p, mode] of modes.reverse()) chmodSync(p, mode);
    if (git) {
      gitFolder = holdGit(rootFolder.fd);
      mkdirSync(join(dir, '.git'));
    }
    own(dir);
    return {
      root,
      dir,
      dirId: folderIdOf(dir),
      files,
      links,
      leftOut,
      worker,
      ...(gitFolder === undefined ? {} : { git: `/proc/${process.pid}/fd/${gitFolder.fd}`, gitFolder }),
    };
  } catch (err) {
    closeHeld(gitFolder);
    await worker.done().catch(() => undefined);
    await removeTree(dir);
    if (err instanceof SkillsError) throw err;
    throw new SkillsError('SANDBOX_FAILED', 'could not copy the workspace for this run', {
      hint: 'Every file and folder of the workspace must be readable by its owner.',
      cause: err,
    });
  } finally {
    closeHeld(rootFolder);
  }
}

/**
 * The workspace's `.git` folder, held (`O_PATH`: nothing is read) for the read-only bind over the copy: looked up in
 * the workspace folder without following a link, and only when it is a folder.
 */
function holdGit(rootFd: number): Held {
  const g = lookAt(rootFd, '.git');
  if (g === undefined || !g.st.isDirectory()) {
    closeHeld(g);
    throw new Error('the workspace .git is no longer a folder');
  }
  return g;
}

/** Closes what a copy holds besides its worker (the `.git` folder's fd), once the sandbox that bound it is gone. */
export function releaseWorkspaceCopy(ws: Pick<WorkspaceCopy, 'gitFolder'>): void {
  closeHeld(ws.gitFolder);
  ws.gitFolder = undefined;
}

/** Writes one file of the copy (a new name in a folder only this process may enter) and returns who it is. */
function writeCopy(
  dest: string,
  body: Buffer,
  mode: number,
  owner: { uid: number; gid: number } | undefined,
): FileIdentity {
  const fd = openSync(
    dest,
    constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
    0o600,
  );
  try {
    for (let off = 0; off < body.length;) off += writeSync(fd, body, off, body.length - off);
    fchmodSync(fd, mode);
    if (owner !== undefined) fchownSync(fd, owner.uid, owner.gid);
    const c = fstatSync(fd, { bigint: true });
    return { ino: c.ino, size: c.size, timeNs: c.ctimeNs };
  } finally {
    closeSync(fd);
  }
}
