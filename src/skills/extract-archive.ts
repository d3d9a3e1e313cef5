import { createHash } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { readZip, ZIP_LIMITS, ZipRefused, type ZipFile } from './read-zip.js';

export interface ExtractedArchive {
  /** `<archives>/<sha256>`: a skills root holding the archive's one skill folder. */
  root: string;
  /** sha256 (hex) of the archive's bytes. */
  sha256: string;
  /** True when an extracted copy was found altered and was made again. */
  remade: boolean;
}

/** The archive extensions served as skills. */
export const ARCHIVE_EXTENSIONS = ['.skill', '.zip'] as const;

/**
 * Extracts a skill archive once into `<archives>/<sha256>/<name>/` (name: the archive's file name without its
 * extension; an archive whose files all sit in one top folder keeps that folder's name), read-only, written to a
 * temporary folder and renamed into place. On reuse every file is compared with the archive: a copy that differs
 * (a file changed, added, removed, made a link, or a mode changed) is removed and extracted again. Throws ZipRefused.
 */
export function extractArchive(file: string, archives: string): ExtractedArchive {
  const bytes = readArchiveBytes(file);
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const files = readZip(bytes);
  if (files.length === 0) throw new ZipRefused(undefined, 'archive holds no files');
  const layout = skillLayout(files, file);
  const root = join(archives, sha256);
  let remade = false;
  if (lstatSync(root, { throwIfNoEntry: false }) !== undefined) {
    if (matches(root, layout)) return { root, sha256, remade };
    removeTree(root);
    remade = true;
  }
  mkdirSync(archives, { recursive: true, mode: 0o700 });
  chmodSync(archives, 0o700);
  const tmp = mkdtempSync(join(archives, '.tmp-'));
  try {
    for (const f of layout) {
      const path = join(tmp, f.path);
      mkdirSync(dirname(path), { recursive: true, mode: 0o755 });
      const mode = f.executable ? 0o555 : 0o444;
      writeFileSync(path, f.data, { mode, flag: 'wx' });
      chmodSync(path, mode); // exactly, whatever the umask: reuse compares it
    }
    sealFolders(tmp);
    renameSync(tmp, root);
  } catch (e) {
    removeTree(tmp);
    throw e;
  }
  return { root, sha256, remade };
}

/** The files as they go under the root: in one folder named for the skill. */
function skillLayout(files: ZipFile[], file: string): ZipFile[] {
  const tops = new Set(files.map((f) => f.path.split('/')[0]!));
  const nested = tops.size === 1 && files.every((f) => f.path.includes('/'));
  if (nested) return files;
  const name = basename(file).replace(/\.(skill|zip)$/i, '');
  return files.map((f) => ({ ...f, path: `${name}/${f.path}` }));
}

/**
 * The archive's bytes, read through one descriptor opened without following a link (and without blocking on a
 * FIFO), so what is checked (a regular file, its size) is what is read, whoever swaps the path meanwhile.
 */
function readArchiveBytes(file: string): Buffer {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ELOOP')
      throw new ZipRefused(undefined, 'a link, not a regular file');
    throw e;
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new ZipRefused(undefined, 'not a regular file');
    if (st.size > ZIP_LIMITS.archiveBytes)
      throw new ZipRefused(undefined, `archive is larger than ${ZIP_LIMITS.archiveBytes} bytes`);
    const bytes = Buffer.alloc(st.size);
    let at = 0;
    for (let n = 1; at < st.size && n > 0; at += n) n = readSync(fd, bytes, at, st.size - at, at);
    if (at !== st.size || readSync(fd, Buffer.alloc(1), 0, 1, at) !== 0)
      throw new ZipRefused(undefined, 'archive changed while it was read');
    return bytes;
  } finally {
    closeSync(fd);
  }
}

/** True when the folder holds exactly the files (no more, no links), each with the archive's bytes and mode. */
function matches(root: string, files: ZipFile[]): boolean {
  const want = new Map(files.map((f) => [f.path, f]));
  let seen = 0;
  const walk = (dir: string, rel: string): boolean => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) {
        if ((lstatSync(join(dir, e.name)).mode & 0o777) !== 0o555) return false;
        if (!walk(join(dir, e.name), path)) return false;
        continue;
      }
      const f = want.get(path);
      if (!e.isFile() || f === undefined) return false;
      const st = lstatSync(join(dir, e.name));
      if (st.size !== f.data.length || (st.mode & 0o777) !== (f.executable ? 0o555 : 0o444)) return false;
      if (!readFileSync(join(dir, e.name)).equals(f.data)) return false;
      seen++;
    }
    return true;
  };
  try {
    return lstatSync(root).isDirectory() && walk(root, '') && seen === want.size;
  } catch {
    return false;
  }
}

/** Makes every folder read-only (0555), deepest first. */
function sealFolders(dir: string): void {
  for (const e of readdirSync(dir, { withFileTypes: true }))
    if (e.isDirectory()) sealFolders(join(dir, e.name));
  chmodSync(dir, 0o555);
}

/** Removes an extracted tree: its folders are opened first; links are never followed. */
function removeTree(dir: string): void {
  const open = (p: string) => {
    try {
      chmodSync(p, 0o700);
      for (const e of readdirSync(p, { withFileTypes: true })) if (e.isDirectory()) open(join(p, e.name));
    } catch {
      // gone, or not a folder
    }
  };
  if (lstatSync(dir, { throwIfNoEntry: false })?.isDirectory() === true) open(dir);
  rmSync(dir, { recursive: true, force: true });
}
