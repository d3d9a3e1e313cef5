/** Collects a stream up to a byte cap; the rest is counted and dropped, so memory stays bounded. */
export interface CappedBuffer {
  push(chunk: Buffer): void;
  /** Total bytes seen, kept or not. */
  readonly total: number;
  readonly truncated: boolean;
  /** The kept bytes, plus a marker line when truncated. */
  result(): Buffer;
}

export const truncationMarker = (dropped: number): string =>
  `\n[skills-mcp: output truncated, ${dropped} more bytes dropped]\n`;

export function createCappedBuffer(cap: number): CappedBuffer {
  const parts: Buffer[] = [];
  let kept = 0;
  let total = 0;
  return {
    push(chunk) {
      total += chunk.length;
      if (kept >= cap) return;
      const take = Math.min(chunk.length, cap - kept);
      // Copy: a slice would keep the whole (possibly 64 KiB) chunk alive.
      parts.push(take === chunk.length ? chunk : Buffer.from(chunk.subarray(0, take)));
      kept += take;
    },
    get total() {
      return total;
    },
    get truncated() {
      return total > kept;
    },
    result() {
      const body = Buffer.concat(parts, kept);
      return total > kept ? Buffer.concat([body, Buffer.from(truncationMarker(total - kept))]) : body;
    },
  };
}
