/**
 * The framing between the server and its workspace worker (`serve-workspace-worker.ts`): each record is a JSON
 * header and an optional body of raw bytes, `[u32 header length][u32 body length][header][body]`. Whatever the
 * worker sends is read as hostile (it runs as the workspace's owner, whom the server does not trust): every length
 * is bounded before anything is buffered, and a header that is not one JSON object ends the stream.
 */
export interface Frame {
  header: Record<string, unknown>;
  body: Buffer;
}

export interface FrameLimits {
  maxHeaderBytes: number;
  maxBodyBytes: number;
  /** Body bytes the whole stream may carry: checked from each prefix, before the body is buffered. */
  maxTotalBodyBytes?: number;
}

export function encodeFrame(header: Record<string, unknown>, body: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.from(JSON.stringify(header), 'utf8');
  const prefix = Buffer.alloc(8);
  prefix.writeUInt32BE(h.length, 0);
  prefix.writeUInt32BE(body.length, 4);
  return Buffer.concat([prefix, h, body]);
}

/**
 * Splits a byte stream into frames, refusing any past `limits`. `push` throws on a malformed or oversized one.
 * Once a frame's prefix is known, its bytes go straight into one buffer of its size: a body is held once, never
 * joined and copied again, and a stream's bodies never add up past `maxTotalBodyBytes`.
 */
export function createFrameReader(limits: FrameLimits) {
  let prefix = Buffer.alloc(0);
  let frame: { buf: Buffer; filled: number; hLen: number } | undefined;
  let totalBody = 0;
  let pending = 0;
  const out: Frame[] = [];

  const start = (p: Buffer) => {
    const hLen = p.readUInt32BE(0);
    const bLen = p.readUInt32BE(4);
    if (hLen === 0 || hLen > limits.maxHeaderBytes) throw new Error('frame header out of bounds');
    if (bLen > limits.maxBodyBytes) throw new Error('frame body out of bounds');
    totalBody += bLen;
    if (limits.maxTotalBodyBytes !== undefined && totalBody > limits.maxTotalBodyBytes)
      throw new Error('frame bodies out of bounds');
    frame = { buf: Buffer.allocUnsafeSlow(hLen + bLen), filled: 0, hLen };
  };
  const finish = (f: { buf: Buffer; hLen: number }) => {
    const parsed: unknown = JSON.parse(f.buf.subarray(0, f.hLen).toString('utf8'));
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw new Error('frame header is not an object');
    out.push({ header: parsed as Record<string, unknown>, body: f.buf.subarray(f.hLen) });
  };

  return {
    push(chunk: Buffer): Frame[] {
      let at = 0;
      while (at < chunk.length || (frame !== undefined && frame.filled === frame.buf.length)) {
        if (frame === undefined) {
          const n = Math.min(8 - prefix.length, chunk.length - at);
          prefix = Buffer.concat([prefix, chunk.subarray(at, at + n)]);
          at += n;
          if (prefix.length < 8) break;
          start(prefix);
          prefix = Buffer.alloc(0);
          continue;
        }
        const n = Math.min(frame.buf.length - frame.filled, chunk.length - at);
        chunk.copy(frame.buf, frame.filled, at, at + n);
        frame.filled += n;
        at += n;
        if (frame.filled === frame.buf.length) {
          const f = frame;
          frame = undefined;
          finish(f);
        }
      }
      pending = prefix.length + (frame?.filled ?? 0);
      return out.splice(0);
    },
    /** Bytes received and not yet framed (a stream that ends with some left was cut short). */
    pending: () => pending,
  };
}
