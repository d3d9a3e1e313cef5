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
}

export function encodeFrame(header: Record<string, unknown>, body: Buffer = Buffer.alloc(0)): Buffer {
  const h = Buffer.from(JSON.stringify(header), 'utf8');
  const prefix = Buffer.alloc(8);
  prefix.writeUInt32BE(h.length, 0);
  prefix.writeUInt32BE(body.length, 4);
  return Buffer.concat([prefix, h, body]);
}

/** Splits a byte stream into frames, refusing any past `limits`. `push` throws on a malformed or oversized one. */
export function createFrameReader(limits: FrameLimits) {
  let chunks: Buffer[] = [];
  let buffered = 0;
  const take = (n: number): Buffer => {
    const all = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
    chunks = all.length > n ? [all.subarray(n)] : [];
    buffered -= n;
    return all.subarray(0, n);
  };
  const peek = (): Buffer => {
    if (chunks.length > 1) chunks = [Buffer.concat(chunks)];
    return chunks[0] ?? Buffer.alloc(0);
  };
  // Bytes the frame being received needs in all, once its prefix is known: chunks are joined only then, so a large
  // body arriving in many chunks is copied once, not once per chunk.
  let need = 8;
  return {
    push(chunk: Buffer): Frame[] {
      chunks.push(chunk);
      buffered += chunk.length;
      const out: Frame[] = [];
      for (;;) {
        if (buffered < need) return out;
        const p = peek();
        const hLen = p.readUInt32BE(0);
        const bLen = p.readUInt32BE(4);
        if (hLen === 0 || hLen > limits.maxHeaderBytes) throw new Error('frame header out of bounds');
        if (bLen > limits.maxBodyBytes) throw new Error('frame body out of bounds');
        need = 8 + hLen + bLen;
        if (buffered < need) return out;
        need = 8;
        take(8);
        const parsed: unknown = JSON.parse(take(hLen).toString('utf8'));
        if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
          throw new Error('frame header is not an object');
        out.push({ header: parsed as Record<string, unknown>, body: Buffer.from(take(bLen)) });
      }
    },
    /** Bytes received and not yet framed (a stream that ends with some left was cut short). */
    pending: () => buffered,
  };
}
