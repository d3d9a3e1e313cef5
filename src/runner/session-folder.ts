import { createHash } from 'node:crypto';
import { chmodSync, chownSync, lstatSync, lutimesSync, mkdirSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { SkillsError } from '../errors.js';
import type { Logger } from '../log.js';
import {
  closeNode,
  folderIdOf,
  listNames,
  openChild,
  openFolder,
  readNodeFully,
  refusalOf,
  type Node,
} from '../sandbox/output-folder.js';
import { removeTree } from '../sandbox/remove-tree.js';
import type { SessionInfo } from './session.js';

/**
 * The session's working folder: `<runs>/sessions/<digest of the session>/`, mounted read-write into every run of
 * the session as $SKILL_SESSION_DIR, so that what one run leaves there is input to the next.
 *
 * The folder name is a digest of the session id and principal: another session (another stdio process, another
 * `Mcp-Session-Id`, another token or signed-in caller) names another folder, and the server only ever opens the
 * folder of the session asking. `sessions/` is the server's own (mode 711) and never mounted, so a script can
 * neither reach a sibling nor swap its own folder for a link; everything inside was made by scripts and is hostile:
 * the server walks it one component at a time through folder fds, never following a link (`output-folder.ts`).
 */
export const SESSIONS_FOLDER = 'sessions';

export interface SessionFolderCaps {
  maxBytes: number;
  maxFiles: number;
}

/** A folder holding deeper trees than this is over its caps: the walk holds one fd per level. */
const MAX_DEPTH = 64;

export const sessionFolderName = (info: Pick<SessionInfo, 'id' | 'principal'>): string =>
  `s-${createHash('sha256')
    .update(`${info.id}\0${info.principal ?? ''}`)
    .digest('hex')
    .slice(0, 32)}`;

export const sessionFolderPath = (runsDir: string, info: Pick<SessionInfo, 'id' | 'principal'>): string =>
  join(runsDir, SESSIONS_FOLDER, sessionFolderName(info));

/** Makes (or finds) the folder the sessions' folders are in: mode 711, a real folder. */
export function prepareSessionsParent(runsDir: string): string {
  const parent = join(runsDir, SESSIONS_FOLDER);
  mkdirSync(parent, { recursive: true, mode: 0o711 });
  // Whatever the umask: the sandbox user (as root, uid 65534) must pass through to its own folder.
  if ((lstatSync(parent).mode & 0o777) !== 0o711) chmodSync(parent, 0o711);
  folderIdOf(parent);
  return parent;
}

/**
 * Makes the session's folder (mode 700, owned by the sandbox user when the server runs as root) or finds it, and
 * marks it used now (what the prune of leftovers goes by). Refuses a path that is not a real folder.
 */
export function prepareSessionFolder(
  runsDir: string,
  info: Pick<SessionInfo, 'id' | 'principal'>,
  owner?: { uid: number; gid: number },
): string {
  prepareSessionsParent(runsDir);
  const dir = sessionFolderPath(runsDir, info);
  try {
    mkdirSync(dir, { mode: 0o700 });
    if (owner !== undefined) chownSync(dir, owner.uid, owner.gid);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
  // A real folder (never a link), marked used now: the prune of leftovers goes by it.
  folderIdOf(dir);
  const now = new Date();
  lutimesSync(dir, now, now);
  return dir;
}

/** What a session folder holds, counted up to just past its caps; `refused` names what fails the check closed. */
export interface FolderUse {
  bytes: number;
  files: number;
  refused?: string;
}

/** Walks a session folder without following links; stops as soon as it is over a cap. */
export function measureSessionFolder(dir: string, caps: SessionFolderCaps): FolderUse {
  const use: FolderUse = { bytes: 0, files: 0 };
  walk(dir, caps.maxFiles + 1, (e) => {
    if (e.problem !== undefined) use.refused = e.problem;
    else if (e.tooMany === true) use.files = Math.max(use.files, caps.maxFiles + 1);
    else if (e.depth > MAX_DEPTH) use.refused = `folders nested deeper than ${MAX_DEPTH}`;
    else {
      use.files++;
      if (e.node?.st.isFile() === true) use.bytes += e.node.st.size;
    }
    return isWithin(use, caps);
  });
  return use;
}

/** Whether a folder's use is within the caps. */
export const isWithin = (use: FolderUse, caps: SessionFolderCaps): boolean =>
  use.refused === undefined && use.files <= caps.maxFiles && use.bytes <= caps.maxBytes;

/** The regular files of a session folder (relative paths, sizes), at most `max`; links and the like are skipped. */
export function listSessionFiles(dir: string, max: number): { path: string; bytes: number }[] {
  const files: { path: string; bytes: number }[] = [];
  let seen = 0;
  walk(dir, 10 * max, (e) => {
    seen++;
    if (e.path !== undefined && e.node !== undefined && refusalOf(e.node) === undefined)
      files.push({ path: e.path, bytes: e.node.st.size });
    return files.length < max && seen < 10 * max && e.depth <= MAX_DEPTH;
  });
  return files.sort((a, b) => (a.path < b.path ? -1 : 1));
}

/**
 * One file of a session folder: reached from the folder one real sub-folder at a time, a regular file with one
 * link, at most `maxBytes`. Anything else is FILE_NOT_FOUND (or FILE_TOO_LARGE).
 */
export function readSessionFile(dir: string, path: string, maxBytes: number): Buffer {
  const opened: Node[] = [];
  try {
    let cur = openFolder(dir, folderIdOf(dir));
    opened.push(cur);
    for (const name of path.split('/')) {
      const next = openChild(cur, name);
      if (typeof next === 'string')
        throw new SkillsError('FILE_NOT_FOUND', `not in the session folder (${next})`);
      opened.push(next);
      cur = next;
    }
    const why = refusalOf(cur);
    if (why !== undefined) throw new SkillsError('FILE_NOT_FOUND', `not a file the server reads (${why})`);
    if (cur.st.size > maxBytes)
      throw new SkillsError('FILE_TOO_LARGE', `the file is ${cur.st.size} bytes; the limit is ${maxBytes}`);
    return readNodeFully(cur, maxBytes);
  } finally {
    for (const n of opened) closeNode(n);
  }
}

/** Removes a session's folder when its session ends; links in it are never followed. Never throws. */
export async function removeSessionFolder(
  runsDir: string,
  info: Pick<SessionInfo, 'id' | 'principal'>,
  log?: Logger,
): Promise<void> {
  const dir = sessionFolderPath(runsDir, info);
  try {
    if (!lstatSync(dir).isDirectory()) return;
  } catch {
    return;
  }
  // Left behind, it goes with the prune of leftovers (runs.retention_days).
  await removeTree(dir).catch((err: unknown) => log?.warn({ err }, 'could not remove a session folder'));
}

/**
 * Removes session folders not used since `cutoffMs`: those of sessions that ended without a goodbye (a killed
 * process). Returns the names removed.
 */
export async function pruneSessionFolders(runsDir: string, cutoffMs: number): Promise<string[]> {
  const parent = join(runsDir, SESSIONS_FOLDER);
  let names: string[];
  try {
    names = readdirSync(parent);
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    if (!/^s-[0-9a-f]{32}$/.test(name)) continue;
    const path = join(parent, name);
    try {
      const st = lstatSync(path);
      if (!st.isDirectory() || st.mtimeMs >= cutoffMs) continue;
      await removeTree(path);
      removed.push(name);
    } catch {
      // Gone meanwhile, or not ours to remove: skip it.
    }
  }
  return removed;
}

/** One entry of a walk: its relative path and what it is (undefined: a link, or gone), or a problem with a folder. */
interface Entry {
  path?: string;
  node?: Node;
  depth: number;
  problem?: string;
  /** The folder holds more than `maxNames` entries. */
  tooMany?: true;
}

/**
 * Visits every entry under `dir` depth first, never through a link, reading at most `maxNames` names of a folder
 * (more is a problem, as is a name that is not UTF-8, which no path here could name). Stops when `visit` says so.
 */
function walk(dir: string, maxNames: number, visit: (e: Entry) => boolean): void {
  const root = openFolder(dir, folderIdOf(dir));
  const go = (folder: Node, prefix: string, depth: number): boolean => {
    const { names, notUtf8, more } = listNames(folder, maxNames);
    if (notUtf8.length > 0 && !visit({ depth, problem: 'a name that is not UTF-8' })) return false;
    if (more && !visit({ depth, tooMany: true })) return false;
    for (const name of names) {
      const n = openChild(folder, name);
      const node = typeof n === 'string' ? undefined : n;
      try {
        if (!visit({ path: `${prefix}${name}`, ...(node === undefined ? {} : { node }), depth }))
          return false;
        if (node?.st.isDirectory() === true && !go(node, `${prefix}${name}/`, depth + 1)) return false;
      } finally {
        if (node !== undefined) closeNode(node);
      }
    }
    return true;
  };
  try {
    go(root, '', 1);
  } finally {
    closeNode(root);
  }
}
