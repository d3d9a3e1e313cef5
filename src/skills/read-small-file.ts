import { closeSync, fstatSync, readSync, type Stats } from 'node:fs';

/**
 * An open file's stats, and its bytes when it is at most `limit` bytes long; closes it. One fstat and read (a
 * catalog of thousands of skills spends most of its start-up in such system calls). The bytes are a view of
 * `scratch` when one is given, so they are valid until the next read into it.
 */
export function readSmallFile(fd: number, limit: number, scratch?: Buffer): { stats: Stats; bytes?: Buffer } {
  try {
    const stats = fstatSync(fd);
    const size = stats.size;
    if (size > limit) return { stats };
    const bytes = scratch !== undefined && scratch.length >= size ? scratch : Buffer.allocUnsafe(size);
    let read = 0;
    for (let n = 1; read < size && n > 0; read += n) n = readSync(fd, bytes, read, size - read, null);
    return { stats, bytes: bytes.subarray(0, read) };
  } finally {
    closeSync(fd);
  }
}
