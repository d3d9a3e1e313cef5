import { lstatSync, type Stats } from 'node:fs';
import { sep } from 'node:path';
import type { Finding, Skill, SkillFile } from './types.js';

/** A folder of a skill as it was listed: adding, removing or renaming an entry in it changes all three. */
export interface FolderStamp {
  /** POSIX path relative to the skill folder; '' for the skill folder itself. */
  path: string;
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
}

/** What loading one candidate folder gave, and what its folders and files looked like then. */
export interface FolderLoad {
  /** realpath of the folder. */
  dir: string;
  root: string;
  folderName: string;
  /** The skill file discovery named (a root that is a skill, a linked folder); else the load looked for one. */
  knownFile?: string;
  /** The skill, when the folder holds one that loads. */
  skill?: Skill;
  findings: Finding[];
  lint: Finding[];
  /**
   * Every folder listed and every file read or listed (a served skill's are its `files`). Undefined when the load
   * cannot be reused (a symlink inside, too many files, or something changed too recently to be sure): such a
   * folder is read again by every load.
   */
  stamps?: { folders: FolderStamp[]; files: SkillFile[] };
  /**
   * The folders the load walked (POSIX paths relative to `dir`, '' for `dir` itself) when `stamps` does not hold
   * them: what a watcher watches to see the load go stale. Undefined when the listing stopped part way.
   */
  walked?: readonly string[];
}

/** Changes newer than this, before a load started, might share a timestamp with a later change: not reused. */
export const SETTLE_MS = 5_000;

export const folderStamp = (path: string, st: Stats): FolderStamp => ({
  path,
  mtimeMs: st.mtimeMs,
  ctimeMs: st.ctimeMs,
  ino: st.ino,
});

/**
 * True when every stamp is older than `startedMs - SETTLE_MS`. A file's timestamps come from a clock coarser than
 * the changes it may see (a tick, or seconds on some file systems): a change right after a load could leave size,
 * times and inode as they were. A change after the load started gets a later status-change time than a settled
 * stamp has, so a settled stamp that still matches means the folder or file is as it was read.
 */
export function isSettled(stamps: NonNullable<FolderLoad['stamps']>, startedMs: number): boolean {
  const limit = startedMs - SETTLE_MS;
  for (const f of stamps.folders) if (!(f.ctimeMs < limit && f.mtimeMs < limit)) return false;
  for (const f of stamps.files) {
    if (f.ctimeMs === undefined || f.mtimeMs === undefined || f.ino === undefined) return false;
    if (!(f.ctimeMs < limit && f.mtimeMs < limit)) return false;
  }
  return true;
}

/**
 * Which stamps of a load to check: all of them, or only its head (the skill folder's own and the skill file's: what
 * the skill's name, description and its being a skill at all depend on), or only the rest (its subfolders and other
 * files: its file index, and the entry point found in it).
 */
export type StampPart = 'all' | 'head' | 'rest';

/**
 * True when every folder and file of the load (of `part` of them) still looks as it did (one lstat each): the same
 * inode, times and, for files, size and mode. Then a fresh load would list and read exactly the same, and give the
 * same result.
 */
export function isUnchanged(load: FolderLoad, part: StampPart = 'all'): boolean {
  const stamps = load.stamps;
  if (stamps === undefined) return false;
  const { folders, files } = stamps;
  const base = load.dir;
  // Without a skill the only file stamped is the skill file that was read.
  const skillFile = load.skill?.skillFile;
  // One lstat call site for folders and files: V8 optimizes this loop at every large start, and each call site
  // it inlines the file system's code into makes that compile longer.
  for (let i = 0, n = folders.length + files.length; i < n; i++) {
    const folder = i < folders.length;
    const f = folder ? folders[i]! : files[i - folders.length]!;
    if (part !== 'all') {
      const head = folder ? f.path === '' : skillFile === undefined || f.path === skillFile;
      if (head !== (part === 'head')) continue;
    }
    const st = lstatIfAny(f.path === '' ? base : `${base}${sep}${f.path}`);
    if (st === undefined || st.mtimeMs !== f.mtimeMs || st.ctimeMs !== f.ctimeMs || st.ino !== f.ino)
      return false;
    if (folder ? !st.isDirectory() : !st.isFile()) return false;
    if (!folder) {
      const file = f as SkillFile;
      if (st.size !== file.size || (st.mode & 0o777) !== file.mode) return false;
    }
  }
  return true;
}

const IF_ANY = { throwIfNoEntry: false } as const;

/** The path's lstat; undefined when it cannot be had (gone, a parent no longer a folder, no permission). */
function lstatIfAny(path: string): Stats | undefined {
  try {
    return lstatSync(path, IF_ANY);
  } catch {
    return undefined;
  }
}
