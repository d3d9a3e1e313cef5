import { lstatSync, readdirSync, realpathSync, statSync, type Stats } from 'node:fs';
import { sep } from 'node:path';
import { SkillsError } from '../errors.js';
import { folderStamp, type FolderStamp } from './folder-load.js';
import type { Finding, SkillFile } from './types.js';

/** Folders and files that are never part of a skill (VCS, caches, OS litter). */
const IGNORED = new Set([
  '.git',
  '.hg',
  '.svn',
  'node_modules',
  '__pycache__',
  '.DS_Store',
  '.venv',
  '.mypy_cache',
  '.pytest_cache',
  '.ruff_cache',
]);
export const MAX_SKILL_FILES = 5000;

export const isInside = (parent: string, child: string): boolean =>
  child === parent || child.startsWith(parent + sep);

/** A link to a folder inside the skill: POSIX paths relative to the skill folder (`target` '' for the folder itself). */
export interface FolderLink {
  path: string;
  target: string;
}

export interface ListOptions {
  /**
   * A top-level file whose stats the caller already holds (the skill file it has just read): when that entry is a
   * regular file, they stand in for its lstat.
   */
  known?: { name: string; stats: Stats };
  /**
   * Stamp every folder listed (one lstat each, `top` standing in for the skill folder's), so a later load can tell
   * whether the listing still holds. No stamps come back when a symlink was met: what it points to can change
   * without any stamp changing.
   */
  stamp?: { top?: Stats };
}

/**
 * Lists the regular files of a skill folder (`dir` must be a realpath), sorted by POSIX path, and the folders it
 * walked (`dirs`: POSIX paths relative to `dir`, '' for `dir` itself). Symlinks are followed
 * only when their target stays inside the folder; others are left out with a `file-symlink-escape` finding.
 * Throws SKILL_TOO_LARGE past {@link MAX_SKILL_FILES} files.
 */
export function listSkillFiles(
  dir: string,
  opts: ListOptions = {},
): {
  files: SkillFile[];
  findings: Finding[];
  dirs: string[];
  /** Links to folders inside the skill (their files are listed at their real path): `path` names `target`. */
  folderLinks: FolderLink[];
  folders?: FolderStamp[];
} {
  const { known, stamp } = opts;
  const files: SkillFile[] = [];
  const folderLinks: FolderLink[] = [];
  const findings: Finding[] = [];
  const dirs: string[] = [];
  const folders: FolderStamp[] = [];
  let linked = false;
  const walk = (abs: string, rel: string) => {
    dirs.push(rel);
    if (stamp !== undefined)
      folders.push(folderStamp(rel, (rel === '' ? stamp.top : undefined) ?? lstatSync(abs)));
    for (const entry of readdirSync(abs, { withFileTypes: true })) {
      if (IGNORED.has(entry.name) || entry.name.endsWith('.pyc')) continue;
      // `abs` is a real folder path and a name holds no separator: no join (and its normalizing) needed.
      const childAbs = `${abs}${sep}${entry.name}`;
      const childRel = rel === '' ? entry.name : `${rel}/${entry.name}`;
      if (entry.isDirectory()) {
        walk(childAbs, childRel);
        continue;
      }
      let st =
        rel === '' && entry.name === known?.name && entry.isFile()
          ? known.stats
          : entry.isSymbolicLink() || entry.isFile()
            ? lstatSync(childAbs)
            : undefined;
      if (st?.isSymbolicLink()) {
        linked = true;
        let target: string;
        try {
          target = realpathSync(childAbs);
        } catch {
          findings.push({
            path: childAbs,
            rule: 'file-symlink-broken',
            severity: 'warning',
            message: `symlink ${childRel} points nowhere; left out`,
          });
          continue;
        }
        if (!isInside(dir, target)) {
          findings.push({
            path: childAbs,
            rule: 'file-symlink-escape',
            severity: 'warning',
            message: `symlink ${childRel} leaves the skill folder; left out`,
          });
          continue;
        }
        st = statSync(target);
        if (st.isDirectory()) {
          // A link to a folder inside the skill: its files are listed at their real path.
          folderLinks.push({
            path: childRel,
            target: target
              .slice(dir.length + 1)
              .split(sep)
              .join('/'),
          });
          continue;
        }
      }
      if (!st?.isFile()) continue;
      files.push({
        path: childRel,
        size: st.size,
        mode: st.mode & 0o777,
        mtimeMs: st.mtimeMs,
        ctimeMs: st.ctimeMs,
        ino: st.ino,
      });
      if (files.length > MAX_SKILL_FILES) {
        throw new SkillsError('SKILL_TOO_LARGE', `the skill has more than ${MAX_SKILL_FILES} files`, {
          hint: 'Keep generated data, dependencies and caches out of skill folders.',
        });
      }
    }
  };
  walk(dir, '');
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return stamp === undefined || linked
    ? { files, findings, dirs, folderLinks }
    : { files, findings, dirs, folderLinks, folders };
}
