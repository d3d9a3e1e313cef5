import { crc32, inflateRawSync } from 'node:zlib';

/** What a skill archive may hold. Everything past these is refused, never truncated. */
export const ZIP_LIMITS = {
  /** Bytes of the archive file itself. */
  archiveBytes: 32 * 1024 * 1024,
  entries: 1000,
  /** Uncompressed bytes of one file. */
  entryBytes: 16 * 1024 * 1024,
  /** Uncompressed bytes of all files together. */
  totalBytes: 64 * 1024 * 1024,
  /** Uncompressed / compressed, for files larger than `ratioFloor` bytes. */
  ratio: 200,
  ratioFloor: 64 * 1024,
  /** Bytes of an entry's name (its whole path). */
  nameBytes: 255,
} as const;

export interface ZipFile {
  /** POSIX path inside the archive, no trailing slash. */
  path: string;
  /** True when the archive marks it executable (a Unix mode with any x bit). */
  executable: boolean;
  data: Buffer;
}

/** Why an archive was refused: the entry it is about (when one) and what is wrong. */
export class ZipRefused extends Error {
  constructor(
    readonly entry: string | undefined,
    readonly reason: string,
  ) {
    super(entry === undefined ? reason : `${entry}: ${reason}`);
  }
}

const EOCD = 0x06054b50;
const CENTRAL = 0x02014b50;
const LOCAL = 0x04034b50;
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const S_IFDIR = 0o040000;
const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads every file of a zip archive, within ZIP_LIMITS. Throws ZipRefused for anything it will not serve: zip64,
 * split archives, encryption, methods other than stored and deflate, links and other special files, names that are
 * absolute, climb (`..`), use backslashes or drive letters, control characters, duplicates (a file and a folder of
 * one name included, and names alike but for case or Unicode form), local headers that disagree with the central
 * directory, sizes or ratios past the limits, and data that does not match its size or CRC.
 */
export function readZip(buf: Buffer): ZipFile[] {
  if (buf.length > ZIP_LIMITS.archiveBytes)
    throw new ZipRefused(undefined, `archive is larger than ${ZIP_LIMITS.archiveBytes} bytes`);
  const end = findEnd(buf);
  const disk = buf.readUInt16LE(end + 4);
  const cdDisk = buf.readUInt16LE(end + 6);
  const count = buf.readUInt16LE(end + 10);
  const cdSize = buf.readUInt32LE(end + 12);
  const cdOffset = buf.readUInt32LE(end + 16);
  if (disk !== 0 || cdDisk !== 0 || count !== buf.readUInt16LE(end + 8))
    throw new ZipRefused(undefined, 'split (multi-disk) archives are not supported');
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff)
    throw new ZipRefused(undefined, 'zip64 archives are not supported');
  if (count > ZIP_LIMITS.entries) throw new ZipRefused(undefined, `more than ${ZIP_LIMITS.entries} entries`);
  if (cdOffset + cdSize > end) throw new ZipRefused(undefined, 'central directory out of bounds');
  const files: ZipFile[] = [];
  const names = new Map<string, 'file' | 'dir'>();
  const folded = new Map<string, string>();
  let total = 0;
  let p = cdOffset;
  for (let i = 0; i < count; i++) {
    if (p + 46 > end || buf.readUInt32LE(p) !== CENTRAL)
      throw new ZipRefused(undefined, `central directory entry ${i + 1} is damaged`);
    const madeBy = buf.readUInt16LE(p + 4) >> 8;
    const flags = buf.readUInt16LE(p + 8);
    const method = buf.readUInt16LE(p + 10);
    const crc = buf.readUInt32LE(p + 16);
    const csize = buf.readUInt32LE(p + 20);
    const usize = buf.readUInt32LE(p + 24);
    const nameLen = buf.readUInt16LE(p + 28);
    const extraLen = buf.readUInt16LE(p + 30);
    const commentLen = buf.readUInt16LE(p + 32);
    const attrs = buf.readUInt32LE(p + 38);
    const localOffset = buf.readUInt32LE(p + 42);
    const next = p + 46 + nameLen + extraLen + commentLen;
    if (next > end) throw new ZipRefused(undefined, `central directory entry ${i + 1} is damaged`);
    const raw = buf.subarray(p + 46, p + 46 + nameLen);
    p = next;
    const name = entryName(raw);
    if ((flags & 0x41) !== 0) throw new ZipRefused(name, 'encrypted entries are not supported');
    if (csize === 0xffffffff || usize === 0xffffffff || localOffset === 0xffffffff)
      throw new ZipRefused(name, 'zip64 entries are not supported');
    const mode = madeBy === 3 ? attrs >>> 16 : 0;
    const isDir = name.endsWith('/');
    const type = mode & S_IFMT;
    if (type !== 0 && type !== (isDir ? S_IFDIR : S_IFREG))
      throw new ZipRefused(
        name,
        type === 0o120000 ? 'links are not allowed' : 'special files are not allowed',
      );
    const path = isDir ? name.slice(0, -1) : name;
    claim(names, path, isDir ? 'dir' : 'file');
    claimFolded(folded, path);
    if (isDir) continue;
    if (method !== 0 && method !== 8)
      throw new ZipRefused(name, `compression method ${method} is not supported (only stored and deflate)`);
    if (usize > ZIP_LIMITS.entryBytes)
      throw new ZipRefused(name, `larger than ${ZIP_LIMITS.entryBytes} bytes uncompressed`);
    total += usize;
    if (total > ZIP_LIMITS.totalBytes)
      throw new ZipRefused(name, `archive holds more than ${ZIP_LIMITS.totalBytes} bytes uncompressed`);
    if (usize > ZIP_LIMITS.ratioFloor && usize > csize * ZIP_LIMITS.ratio)
      throw new ZipRefused(name, `compression ratio above ${ZIP_LIMITS.ratio}:1`);
    const data = entryData(buf, { name, raw, method }, localOffset, csize, cdOffset);
    const out = method === 0 ? data : inflate(name, data, usize);
    if (out.length !== usize) throw new ZipRefused(name, 'size does not match the central directory');
    if (crc32(out) !== crc) throw new ZipRefused(name, 'CRC does not match: damaged or altered');
    files.push({ path, executable: (mode & 0o111) !== 0, data: out });
  }
  return files;
}

function findEnd(buf: Buffer): number {
  const stop = Math.max(0, buf.length - 22 - 0xffff);
  for (let i = buf.length - 22; i >= stop; i--) if (buf.readUInt32LE(i) === EOCD) return i;
  throw new ZipRefused(undefined, 'not a zip archive (no end of central directory)');
}

/** The entry's name, checked: UTF-8, relative, no `..`, no backslash or drive letter, no control characters. */
function entryName(raw: Buffer): string {
  let name: string;
  try {
    name = utf8.decode(raw);
  } catch {
    throw new ZipRefused(JSON.stringify(raw.toString('latin1')), 'name is not UTF-8');
  }
  const shown = JSON.stringify(name).slice(1, -1);
  if (raw.length === 0) throw new ZipRefused(undefined, 'an entry has an empty name');
  if (raw.length > ZIP_LIMITS.nameBytes)
    throw new ZipRefused(`${shown.slice(0, 60)}…`, `name longer than ${ZIP_LIMITS.nameBytes} bytes`);
  // eslint-disable-next-line no-control-regex
  if (/[\u0000-\u001f\u007f-\u009f\u2028\u2029]/.test(name))
    throw new ZipRefused(shown, 'name holds control characters');
  if (name.includes('\\')) throw new ZipRefused(shown, 'name holds a backslash');
  if (name.startsWith('/') || /^[A-Za-z]:/.test(name)) throw new ZipRefused(shown, 'absolute name');
  const parts = (name.endsWith('/') ? name.slice(0, -1) : name).split('/');
  if (parts.some((s) => s === '..')) throw new ZipRefused(shown, 'name climbs out of the archive (..)');
  if (parts.some((s) => s === '' || s === '.')) throw new ZipRefused(shown, 'name has an empty or "." part');
  return name;
}

/** Records a path, refusing a second entry of one name and a file that is also some entry's folder. */
function claim(names: Map<string, 'file' | 'dir'>, path: string, kind: 'file' | 'dir'): void {
  const had = names.get(path);
  if (had !== undefined && (had === 'file' || kind === 'file'))
    throw new ZipRefused(path, 'duplicate name in the archive');
  names.set(path, kind);
  const parts = path.split('/');
  for (let i = 1; i < parts.length; i++) {
    const parent = parts.slice(0, i).join('/');
    if (names.get(parent) === 'file') throw new ZipRefused(path, `"${parent}" is both a file and a folder`);
    if (!names.has(parent)) names.set(parent, 'dir');
  }
}

/**
 * Refuses a path that another entry's equals once case and Unicode form are set aside (`SKILL.md` / `skill.md`,
 * `é` / `e\u0301`): such names look alike to a person, and on a case- or form-insensitive disk they are one file.
 */
function claimFolded(folded: Map<string, string>, path: string): void {
  const parts = path.split('/');
  for (let i = 1; i <= parts.length; i++) {
    const p = parts.slice(0, i).join('/');
    const key = p.normalize('NFC').toLowerCase();
    const had = folded.get(key);
    if (had === undefined) folded.set(key, p);
    else if (had !== p)
      throw new ZipRefused(path, `"${p}" differs only in case or Unicode form from "${had}"`);
  }
}

/** The entry's data, once its local header agrees with the central directory on the name and the method. */
function entryData(
  buf: Buffer,
  entry: { name: string; raw: Buffer; method: number },
  offset: number,
  csize: number,
  limit: number,
): Buffer {
  const { name } = entry;
  if (offset + 30 > limit || buf.readUInt32LE(offset) !== LOCAL)
    throw new ZipRefused(name, 'local header is damaged');
  const nameLen = buf.readUInt16LE(offset + 26);
  const start = offset + 30 + nameLen + buf.readUInt16LE(offset + 28);
  if (start > limit || !buf.subarray(offset + 30, offset + 30 + nameLen).equals(entry.raw))
    throw new ZipRefused(name, 'the local header names another file than the central directory');
  if (buf.readUInt16LE(offset + 8) !== entry.method)
    throw new ZipRefused(
      name,
      'the local header gives another compression method than the central directory',
    );
  if (start + csize > limit) throw new ZipRefused(name, 'data out of bounds');
  return buf.subarray(start, start + csize);
}

function inflate(name: string, data: Buffer, usize: number): Buffer {
  try {
    // One byte more than declared, so a stream that would give more is caught as a size mismatch, not cut off.
    return inflateRawSync(data, { maxOutputLength: Math.max(1, usize + 1) });
  } catch {
    throw new ZipRefused(name, 'deflate data is damaged or larger than declared');
  }
}
