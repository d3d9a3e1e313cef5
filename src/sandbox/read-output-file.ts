import { constants } from 'node:fs';
import { lstat, open, readdir, realpath } from 'node:fs/promises';
import { join, sep } from 'node:path';
import { SkillsError } from '../errors.js';

/**
 * Reading what a sandboxed script left in its output folder, on the host, without trusting it: a script
 * can leave `output.json -> ~/.ssh/id_rsa`, a hard link, a FIFO that blocks the reader, or a huge file.
 * Every path component is checked with lstat (no symlinks anywhere), the file is opened with O_NOFOLLOW |
 * O_NONBLOCK, must be a regular file with a single link, and its real path must stay inside the folder.
 */
export interface OutputFile {
  /** POSIX path relative to the output folder. */
  path: string;
  content: Buffer;
}

const refuse = (rel: string, why: string): never => {
  throw new SkillsError('PATH_INVALID', `output file ${JSON.stringify(rel)} refused: ${why}`);
};

function checkRelative(rel: string): string[] {
  const parts = rel.split('/');
  if (rel === '' || rel.startsWith('/') || rel.includes('\0')) refuse(rel, 'not a relative path');
  if (parts.some((p) => p === '' || p === '.' || p === '..')) refuse(rel, 'not a plain relative path');
  return parts;
}

export async function readOutputFile(dir: string, rel: string, maxBytes: number): Promise<OutputFile> {
  const root = await realpath(dir);
  const parts = checkRelative(rel);
  let cur = root;
  for (const [i, part] of parts.entries()) {
    cur = join(cur, part);
    const st = await lstat(cur).catch(() => refuse(rel, 'not found'));
    if (st.isSymbolicLink()) refuse(rel, 'is or passes through a symlink');
    if (i < parts.length - 1 && !st.isDirectory()) refuse(rel, 'a parent is not a folder');
  }
  const fh = await open(cur, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK).catch(() =>
    refuse(rel, 'cannot be opened without following links'),
  );
  try {
    const st = await fh.stat();
    if (!st.isFile()) refuse(rel, 'not a regular file');
    if (st.nlink !== 1) refuse(rel, 'has hard links');
    if (st.size > maxBytes) refuse(rel, `larger than ${maxBytes} bytes`);
    const real = await realpath(cur);
    if (!real.startsWith(root + sep)) refuse(rel, 'resolves outside the output folder');
    const content = Buffer.alloc(st.size);
    const { bytesRead } = await fh.read(content, 0, st.size, 0);
    return { path: rel, content: content.subarray(0, bytesRead) };
  } finally {
    await fh.close();
  }
}

export interface OutputListing {
  /** Regular single-link files, POSIX paths relative to the folder, sorted. */
  files: string[];
  /** Entries not collected (symlinks, hard links, devices, FIFOs, sockets), with the reason. */
  refused: Array<{ path: string; reason: string }>;
}

/** Walks an output folder without following links. */
export async function listOutputFiles(dir: string, maxEntries = 10_000): Promise<OutputListing> {
  const out: OutputListing = { files: [], refused: [] };
  const walk = async (abs: string, rel: string): Promise<void> => {
    for (const e of await readdir(abs, { withFileTypes: true })) {
      if (out.files.length + out.refused.length >= maxEntries) return;
      const r = rel === '' ? e.name : `${rel}/${e.name}`;
      if (e.isDirectory()) await walk(join(abs, e.name), r);
      else if (e.isSymbolicLink()) out.refused.push({ path: r, reason: 'symlink' });
      else if (!e.isFile()) out.refused.push({ path: r, reason: 'not a regular file' });
      else if ((await lstat(join(abs, e.name))).nlink !== 1)
        out.refused.push({ path: r, reason: 'hard link' });
      else out.files.push(r);
    }
  };
  await walk(dir, '');
  out.files.sort();
  return out;
}
