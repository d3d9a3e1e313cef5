/** Bytes kept from each end of an oversized line, enough to find its JSON-RPC `id`. */
export const OVERSIZED_EDGE_BYTES = 4096;

/** A line longer than the limit: its full size and its first and last bytes (the rest was never kept). */
export interface OversizedLine {
  bytes: number;
  head: Buffer;
  tail: Buffer;
}

export interface LineFramer {
  /** Feeds bytes as they were read. Complete lines are reported synchronously, in order. */
  push(chunk: Buffer): void;
  /** The stream ended. An unterminated line is dropped; one already over the limit is reported as oversized. */
  end(): void;
}

export interface LineFramerOptions {
  /** Longest line (without its "\n") that is collected and reported whole. */
  maxLineBytes: number;
  onLine: (line: Buffer) => void;
  onOversized: (line: OversizedLine) => void;
}

/**
 * Splits a byte stream into "\n"-terminated lines while holding at most `maxLineBytes` of any one line: once a line
 * grows past the limit its bytes are dropped as they arrive (keeping only its first and last few KiB) until its
 * newline, so a gigabyte without a newline costs no more memory than the limit. A line is joined once, when it
 * completes, so collecting it is linear in its size.
 */
export function createLineFramer(opts: LineFramerOptions): LineFramer {
  const { maxLineBytes, onLine, onOversized } = opts;
  let parts: Buffer[] = [];
  let size = 0;
  let oversized: { head: Buffer; tail: Buffer } | undefined;

  const reset = () => {
    parts = [];
    size = 0;
    oversized = undefined;
  };

  const keepTail = (o: { tail: Buffer }, piece: Buffer) => {
    o.tail =
      piece.length >= OVERSIZED_EDGE_BYTES
        ? Buffer.from(piece.subarray(piece.length - OVERSIZED_EDGE_BYTES))
        : Buffer.from(Buffer.concat([o.tail, piece]).subarray(-OVERSIZED_EDGE_BYTES));
  };

  // Called when the line so far (the collected parts plus `piece`) first exceeds the limit.
  const startDiscarding = (piece: Buffer) => {
    const first = Buffer.concat([...parts, piece].slice(0, firstPartsCovering(parts, OVERSIZED_EDGE_BYTES)));
    const o = { head: Buffer.from(first.subarray(0, OVERSIZED_EDGE_BYTES)), tail: Buffer.alloc(0) };
    for (const p of [...parts, piece]) keepTail(o, p);
    parts = [];
    oversized = o;
  };

  const add = (piece: Buffer) => {
    size += piece.length;
    if (oversized !== undefined) keepTail(oversized, piece);
    else if (size > maxLineBytes) startDiscarding(piece);
    else if (piece.length > 0) parts.push(piece);
  };

  const push = (chunk: Buffer) => {
    let start = 0;
    while (start <= chunk.length) {
      const nl = chunk.indexOf(0x0a, start);
      if (nl === -1) {
        if (start < chunk.length) add(chunk.subarray(start));
        return;
      }
      add(chunk.subarray(start, nl));
      if (oversized !== undefined) onOversized({ bytes: size, ...oversized });
      else onLine(parts.length === 1 ? parts[0]! : Buffer.concat(parts, size));
      reset();
      start = nl + 1;
    }
  };

  const end = () => {
    if (oversized !== undefined) onOversized({ bytes: size, ...oversized });
    reset();
  };

  return { push, end };
}

/** How many leading parts hold at least `n` bytes (all of them when they hold fewer). */
function firstPartsCovering(parts: Buffer[], n: number): number {
  let bytes = 0;
  for (let i = 0; i < parts.length; i++) {
    bytes += parts[i]!.length;
    if (bytes >= n) return i + 1;
  }
  return parts.length + 1;
}
