import { gunzipSync } from 'node:zlib';

/** Largest a vendored tarball may unpack to before it is refused unread. */
const MAX_UNPACKED = 128 * 1024 * 1024;
const BLOCK = 512;

const field = (b: Buffer, at: number, len: number) => {
  const s = b.subarray(at, at + len);
  const end = s.indexOf(0);
  return s.subarray(0, end === -1 ? len : end).toString('utf8');
};

/**
 * The text of every `<top>/package.json` in a gzipped tar (what npm reads as the package's manifest once it strips
 * the top folder), or undefined when the archive cannot be read within bounds. Hostile input: sizes are checked
 * against the archive, long names (pax `path`, GNU `L`) are honoured so none hides a manifest, nothing is written.
 */
export function tarballManifests(tgz: Buffer): string[] | undefined {
  let tar: Buffer;
  try {
    tar = gunzipSync(tgz, { maxOutputLength: MAX_UNPACKED });
  } catch {
    return undefined;
  }
  const out: string[] = [];
  let longName: string | undefined;
  for (let at = 0; at + BLOCK <= tar.length;) {
    const h = tar.subarray(at, at + BLOCK);
    if (h.every((x) => x === 0)) break;
    const sizeField = h.subarray(124, 136);
    if ((sizeField[0] ?? 0) & 0x80) return undefined; // base-256 size: larger than any manifest, never expected
    const size = parseInt(field(h, 124, 12).trim() || '0', 8);
    if (!Number.isSafeInteger(size) || size < 0) return undefined;
    const body = at + BLOCK;
    if (body + size > tar.length) return undefined;
    const data = tar.subarray(body, body + size);
    const type = String.fromCharCode(h[156] ?? 0);
    at = body + Math.ceil(size / BLOCK) * BLOCK;
    if (type === 'x') {
      const m = /(?:^|\n)\d+ path=([^\n]*)\n/.exec(data.toString('utf8'));
      if (m !== null) longName = m[1];
      continue;
    }
    if (type === 'L') {
      longName = field(data, 0, data.length);
      continue;
    }
    if (type === 'g') continue;
    const prefix = field(h, 257, 6).startsWith('ustar') ? field(h, 345, 155) : '';
    const name = longName ?? (prefix === '' ? field(h, 0, 100) : `${prefix}/${field(h, 0, 100)}`);
    longName = undefined;
    const parts = name.split('/').filter((p) => p !== '' && p !== '.');
    if (parts.length === 2 && parts[1] === 'package.json' && (type === '0' || type === '\0'))
      out.push(data.toString('utf8'));
  }
  return out;
}
