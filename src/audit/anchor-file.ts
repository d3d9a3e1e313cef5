import {
  closeSync,
  existsSync,
  fstatSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
  renameSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import type { AnchorRecord } from './anchor-record.js';

const lines = (text: string) => text.split('\n').filter((l) => l.trim() !== '');

/** The lines of an anchor file, or undefined when there is no file. */
export function readAnchorLines(path: string): string[] | undefined {
  if (!existsSync(path)) return undefined;
  return lines(readFileSync(path, 'utf8'));
}

const TAIL_BYTES = 64 * 1024;

/** The last line of an anchor file (read from its end only), '' for an empty file, undefined when there is none. */
export function readLastAnchorLine(path: string): string | undefined {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw e;
  }
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(Math.min(size, TAIL_BYTES));
    readSync(fd, buf, 0, buf.length, size - buf.length);
    return lines(buf.toString('utf8')).at(-1) ?? '';
  } finally {
    closeSync(fd);
  }
}

/** Creates an empty anchor file (0600, its folder 0700) unless one exists. */
export function createAnchorFile(path: string): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  try {
    closeSync(openSync(path, 'wx', 0o600));
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
  }
}

/** Renames an anchor file out of the way (kept for inspection); returns the new path. */
export function setAnchorFileAside(path: string, ts: number): string {
  const to = `${path}.set-aside-${new Date(ts).toISOString().replace(/[:.]/g, '-')}`;
  renameSync(path, to);
  return to;
}

/** Appends one record and fsyncs it: durable when this returns. The file is created 0600. */
export function appendAnchor(path: string, record: AnchorRecord): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const fd = openSync(path, 'a', 0o600);
  try {
    writeSync(fd, `${JSON.stringify(record)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
