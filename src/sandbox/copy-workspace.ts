import { constants, type BigIntStats } from 'node:fs';
import {
  chmod,
  copyFile,
  lchown,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readlink,
  realpath,
  rm,
  symlink,
} from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { SkillsError } from '../errors.js';
import { perm } from './stage-mounts.js';

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
  /** The host's `.git` folder to bind read-only at `<workspace>/.git`, when there is one. */
  git?: string;
  /** Every regular file copied, by POSIX relative path. */
  files: Map<string, CopiedFile>;
  /** Every symlink copied, and its target (never applied back). */
  links: Map<string, string>;
  /** Paths left out because the sandbox user could not read them on the host: never changed by a run. */
  leftOut: Set<string>;
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

const isOpen = (st: BigIntStats, who: { uid: number; gid: number }) => {
  const ids = { uid: Number(st.uid), gid: Number(st.gid) };
  const mode = Number(st.mode);
  const may = (bit: number) => perm(mode, who.uid, who.gid, ids, bit);
  return st.isSymbolicLink() || (may(0o4) && (!st.isDirectory() || may(0o1)));
};

const tooLarge = (what: string) =>
  new SkillsError('SANDBOX_FAILED', `the workspace is too large to copy for this run (${what})`, {
    hint: `A run that writes the workspace, or reads a workspace folder the sandbox user may not open, works on a private copy (at most ${MAX_WORKSPACE_FILES} files, ${MAX_WORKSPACE_BYTES / 1024 / 1024} MiB). Configure a smaller workspace, let the skill only read it (workspace: read), or let the sandbox user open the folder.`,
  });

/**
 * Copies `workspace` into a fresh folder; `owner` (root servers) becomes the owner of everything in it. With
 * `onlyOpenTo`, entries that identity could not read on the host by their mode bits (files it may not read, folders
 * it may not list and enter) are left out and listed in `leftOut`: the copy then shows no more than the workspace
 * itself would to the sandbox user, and a writing run cannot change what it could not read. Paths in `hide` (and
 * everything below them: the server's private files) are left out too.
 */
export async function copyWorkspace(
  workspace: string,
  owner?: { uid: number; gid: number },
  onlyOpenTo?: { uid: number; gid: number },
  hide: readonly string[] = [],
): Promise<WorkspaceCopy> {
  const root = await realpath(workspace);
  const hidden = new Set(await Promise.all(hide.map((p) => realpath(p).catch(() => resolve(p)))));
  const dir = await mkdtemp(join(tmpdir(), 'skills-mcp-ws-'));
  const files = new Map<string, CopiedFile>();
  const links = new Map<string, string>();
  const leftOut = new Set<string>();
  let entries = 0;
  let bytes = 0;
  const own = async (p: string) => {
    if (owner !== undefined) await lchown(p, owner.uid, owner.gid);
  };

  const walk = async (from: string, to: string, rel: string, depth: number): Promise<void> => {
    if (depth > MAX_DEPTH) throw tooLarge(`deeper than ${MAX_DEPTH} folders`);
    for (const name of await readdir(from)) {
      if (name === '.git') continue;
      const src = join(from, name);
      const dest = join(to, name);
      const r = rel === '' ? name : `${rel}/${name}`;
      if (hidden.has(src)) {
        leftOut.add(r);
        continue;
      }
      if (++entries > MAX_WORKSPACE_FILES) throw tooLarge(`more than ${MAX_WORKSPACE_FILES} entries`);
      const st = await lstat(src, { bigint: true });
      if (onlyOpenTo !== undefined && !isOpen(st, onlyOpenTo)) {
        leftOut.add(r);
        continue;
      }
      if (st.isDirectory()) {
        await mkdir(dest, { mode: 0o700 });
        await walk(src, dest, r, depth + 1);
        await chmod(dest, (Number(st.mode) & 0o777) | 0o700);
        await own(dest);
      } else if (st.isFile()) {
        bytes += Number(st.size);
        if (bytes > MAX_WORKSPACE_BYTES) throw tooLarge(`more than ${MAX_WORKSPACE_BYTES / 1024 / 1024} MiB`);
        await copyFile(src, dest, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
        const mode = Number(st.mode) & 0o777;
        await chmod(dest, mode | 0o600);
        await own(dest);
        const c = await lstat(dest, { bigint: true });
        files.set(r, {
          host: { ino: st.ino, size: st.size, timeNs: st.mtimeNs },
          copy: { ino: c.ino, size: c.size, timeNs: c.ctimeNs },
          mode,
          uid: Number(st.uid),
          gid: Number(st.gid),
        });
      } else if (st.isSymbolicLink()) {
        const target = await readlink(src);
        await symlink(target, dest);
        await own(dest);
        links.set(r, target);
      }
      // Sockets, FIFOs and devices are not copied.
    }
  };

  try {
    await walk(root, dir, '', 0);
    const git = await lstat(join(root, '.git')).catch(() => undefined);
    if (git?.isDirectory() === true) await mkdir(join(dir, '.git'));
    await own(dir);
    return {
      root,
      dir,
      files,
      links,
      leftOut,
      ...(git?.isDirectory() === true ? { git: join(root, '.git') } : {}),
    };
  } catch (err) {
    await rm(dir, { recursive: true, force: true });
    if (err instanceof SkillsError) throw err;
    throw new SkillsError('SANDBOX_FAILED', 'could not copy the workspace for this run', {
      hint: 'Every file and folder of the workspace must be readable by the server.',
      cause: err,
    });
  }
}
