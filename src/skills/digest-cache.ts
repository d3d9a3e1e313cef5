import { createHash } from 'node:crypto';
import { closeSync, fstatSync, openSync, readSync, statSync, type Stats } from 'node:fs';

/** A file's content as a manifest publishes it: `sha256:<64 lowercase hex>` and its length in bytes. */
export interface FileDigest {
  digest: string;
  size: number;
}

/** A digest with the modification time of the bytes it covers. */
export interface FileState extends FileDigest {
  mtimeMs: number;
}

export interface DigestCache {
  /**
   * The digest of the file at `path` (symlinks followed) as it is now. The file is read and hashed only when its
   * (size, mtime) differ from the cached ones, so a second listing costs one stat per file. Throws what fs throws.
   */
  digestOf(path: string): FileState;
}

/** Digests of exactly `bytes`, in the manifest's format. */
export const sha256Digest = (bytes: Uint8Array): string =>
  `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

const sameFile = (a: Stats, b: Stats) => a.size === b.size && a.mtimeMs === b.mtimeMs && a.ino === b.ino;

/** Reads a whole file through one descriptor; undefined when it changed while being read. */
function readStable(path: string): { bytes: Buffer; stat: Stats } | undefined {
  const fd = openSync(path, 'r');
  try {
    const before = fstatSync(fd);
    const bytes = Buffer.alloc(before.size);
    let off = 0;
    while (off < bytes.length) {
      const n = readSync(fd, bytes, off, bytes.length - off, off);
      if (n === 0) break;
      off += n;
    }
    const after = fstatSync(fd);
    // A short read, a longer file or a new mtime: a writer was at work. The caller reads again.
    if (off !== before.size || !sameFile(before, after)) return undefined;
    return { bytes, stat: before };
  } finally {
    closeSync(fd);
  }
}

/**
 * Per-file sha256 digests, computed on first need and cached by (path, size, mtime). Nothing is hashed until a
 * caller asks. `maxEntries` bounds the memory (the least recently computed entries go first).
 */
export function createDigestCache(maxEntries = 200_000): DigestCache {
  const cache = new Map<string, FileState>();
  const digestOf = (path: string): FileState => {
    const st = statSync(path);
    const hit = cache.get(path);
    if (hit !== undefined && hit.size === st.size && hit.mtimeMs === st.mtimeMs) return hit;
    for (let attempt = 0; ; attempt++) {
      const read = readStable(path);
      if (read === undefined && attempt < 3) continue;
      if (read === undefined) throw new Error(`${path} kept changing while it was hashed`);
      const entry: FileState = {
        digest: sha256Digest(read.bytes),
        size: read.bytes.length,
        mtimeMs: read.stat.mtimeMs,
      };
      cache.delete(path);
      cache.set(path, entry);
      if (cache.size > maxEntries) cache.delete(cache.keys().next().value!);
      return entry;
    }
  };
  return { digestOf };
}
