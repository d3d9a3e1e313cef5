import { gunzipSync, gzipSync } from 'node:zlib';

/** Largest a vendored tarball may unpack to before it is refused unread. */
const MAX_UNPACKED = 128 * 1024 * 1024;
const BLOCK = 512;

const field = (b: Buffer, at: number, len: number) => {
  const s = b.subarray(at, at + len);
  const end = s.indexOf(0);
  return s.subarray(0, end === -1 ? len : end).toString('utf8');
};

/** A vendored tarball as this module read it: its files, and the manifest npm will read. */
export interface VendoredTarball {
  /** The text of every `<top>/package.json` the archive holds (the last one is what a repacked archive keeps). */
  manifests: string[];
  /** The archive rewritten from what was read (see {@link readTarball}): what npm is given, never the original. */
  repacked: () => Buffer;
}

/** Why an archive is refused (shown after the tarball's path). */
export class TarballError extends Error {}

/** The records of a pax extended header (`"<len> key=value\n"`…), by key; a repeated or malformed one refuses. */
function paxRecords(data: Buffer): Map<string, string> {
  const out = new Map<string, string>();
  let at = 0;
  while (at < data.length && data[at] !== 0) {
    const sp = data.indexOf(0x20, at);
    const len = sp === -1 ? NaN : Number(data.subarray(at, sp).toString('latin1'));
    if (
      !Number.isSafeInteger(len) ||
      len <= sp - at + 1 ||
      at + len > data.length ||
      data[at + len - 1] !== 0x0a
    )
      throw new TarballError('holds a malformed pax header');
    const rec = data.subarray(sp + 1, at + len - 1).toString('utf8');
    const eq = rec.indexOf('=');
    if (eq <= 0) throw new TarballError('holds a malformed pax header');
    const key = rec.slice(0, eq);
    if (out.has(key)) throw new TarballError(`holds a pax header naming ${JSON.stringify(key)} twice`);
    out.set(key, rec.slice(eq + 1));
    at += len;
  }
  return out;
}

/** A POSIX header block for `name` (or a pax header + block when it does not fit), mode and size. */
function header(name: string, mode: number, size: number, type: '0' | 'x'): Buffer {
  const h = Buffer.alloc(BLOCK);
  h.write(name, 0, 100, 'utf8');
  h.write(`${mode.toString(8).padStart(7, '0')}\0`, 100);
  h.write('0000000\0', 108);
  h.write('0000000\0', 116);
  h.write(`${size.toString(8).padStart(11, '0')}\0`, 124);
  h.write('00000000000\0', 136);
  h.write(type, 156);
  h.write('ustar\u000000', 257, 8, 'latin1');
  h.fill(0x20, 148, 156);
  const sum = h.reduce((a, b) => a + b, 0);
  h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
  return h;
}

const pad = (n: number) => Buffer.alloc((BLOCK - (n % BLOCK)) % BLOCK);

function entry(path: string, mode: number, data: Buffer): Buffer[] {
  const out: Buffer[] = [];
  if (Buffer.byteLength(path) > 100 || !/^[\x20-\x7e]*$/.test(path)) {
    const rest = ` path=${path}\n`;
    let n = Buffer.byteLength(rest) + 1;
    while (String(n).length + Buffer.byteLength(rest) !== n) n = String(n).length + Buffer.byteLength(rest);
    const rec = Buffer.from(`${n}${rest}`);
    out.push(header('PaxHeader', 0o644, rec.length, 'x'), rec, pad(rec.length));
  }
  out.push(header(path.slice(0, 100), mode, data.length, '0'), data, pad(data.length));
  return out;
}

/**
 * Reads a vendored `npm pack` tarball strictly, as hostile input. What npm's own tar reader would make of an
 * unusual archive (a contiguous-file entry, repeated pax records, a GNU header's prefix field, entries after a lone
 * zero block) is not guessed at: such archives are refused, and npm is only ever given {@link VendoredTarball.repacked}
 * — plain files rebuilt from what was read here — so the manifest checked is the manifest installed. Sizes are
 * checked against the archive, checksums verified, long names (pax `path`, GNU `L`) honoured, links and folders
 * dropped (npm drops links too), nothing is written. Throws {@link TarballError}.
 */
export function readTarball(tgz: Buffer): VendoredTarball {
  let tar: Buffer;
  try {
    tar = gunzipSync(tgz, { maxOutputLength: MAX_UNPACKED });
  } catch {
    throw new TarballError(`is not a gzipped archive of at most ${MAX_UNPACKED / 1024 / 1024} MiB unpacked`);
  }
  const files = new Map<string, { mode: number; data: Buffer }>();
  const manifests: string[] = [];
  let longName: string | undefined;
  let at = 0;
  for (; at + BLOCK <= tar.length;) {
    const h = tar.subarray(at, at + BLOCK);
    if (h.every((x) => x === 0)) break;
    let sum = 0;
    for (const [i, x] of h.entries()) sum += i >= 148 && i < 156 ? 0x20 : x;
    if (parseInt(field(h, 148, 8).trim() || 'x', 8) !== sum)
      throw new TarballError('holds a header whose checksum is wrong');
    if ((h[124] ?? 0) & 0x80) throw new TarballError('holds an entry of a base-256 size');
    const size = parseInt(field(h, 124, 12).trim() || '0', 8);
    if (!Number.isSafeInteger(size) || size < 0) throw new TarballError('holds an entry without a size');
    const body = at + BLOCK;
    if (body + size > tar.length) throw new TarballError('is truncated');
    const data = tar.subarray(body, body + size);
    const type = String.fromCharCode(h[156] ?? 0);
    at = body + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'x' || type === 'g') {
      const pax = paxRecords(data);
      if (pax.has('size')) throw new TarballError('holds a pax header overriding an entry’s size');
      if (type === 'g' && pax.has('path')) throw new TarballError('holds a global pax header naming a path');
      const p = pax.get('path');
      if (p !== undefined) longName = p;
      continue;
    }
    if (type === 'L') {
      longName = field(data, 0, data.length);
      continue;
    }
    if (type === 'K') continue; // a long link target: the link itself is dropped
    const posix = h.subarray(257, 265).toString('latin1') === 'ustar\u000000';
    const gnu = h.subarray(257, 265).toString('latin1') === 'ustar  \0';
    if (!posix && !gnu && !h.subarray(257, 265).every((x) => x === 0))
      throw new TarballError('holds a header of an unknown tar format');
    if (!posix && !h.subarray(345, 500).every((x) => x === 0))
      throw new TarballError('holds a non-POSIX header with a prefix field');
    const prefix = posix ? field(h, 345, 155) : '';
    const name = longName ?? (prefix === '' ? field(h, 0, 100) : `${prefix}/${field(h, 0, 100)}`);
    longName = undefined;
    if (name.includes('\\') || name.includes('\0'))
      throw new TarballError(`holds an entry named ${JSON.stringify(name.slice(0, 100))}`);
    const parts = name.split('/').filter((p) => p !== '' && p !== '.');
    if (parts.includes('..'))
      throw new TarballError(`holds an entry climbing out of it: ${JSON.stringify(name.slice(0, 100))}`);
    if (type === '1' || type === '2' || type === '5') continue; // links (npm drops them) and folders
    if (type !== '0' && type !== '\0')
      throw new TarballError(
        `holds an entry of tar type ${JSON.stringify(type)}; only files, folders and links are read`,
      );
    if (parts.length < 2) continue; // npm strips the top folder: nothing of it is installed
    const path = parts.slice(1).join('/');
    const mode = parseInt(field(h, 100, 8).trim() || '0', 8) & 0o111 ? 0o755 : 0o644;
    files.delete(path); // the last entry of a path is what an unpacked archive holds
    files.set(path, { mode, data });
    if (parts.length === 2 && parts[1] === 'package.json') manifests.push(data.toString('utf8'));
  }
  if (!tar.subarray(at).every((x) => x === 0))
    throw new TarballError('holds data after its end (a zero block)');
  return {
    manifests,
    repacked: () =>
      gzipSync(
        Buffer.concat([
          ...[...files].flatMap(([p, f]) => entry(`package/${p}`, f.mode, f.data)),
          Buffer.alloc(2 * BLOCK),
        ]),
      ),
  };
}

/**
 * The text of every `<top>/package.json` in a gzipped tar (what npm reads as the package's manifest once it strips
 * the top folder), or undefined when {@link readTarball} refuses the archive.
 */
export function tarballManifests(tgz: Buffer): string[] | undefined {
  try {
    return readTarball(tgz).manifests;
  } catch (e) {
    if (e instanceof TarballError) return undefined;
    throw e;
  }
}
