import type { IncomingMessage } from 'node:http';

/** A body read in full, or `undefined`: over the limit (declared or received). */
export type RequestBodyText = string | undefined;

/**
 * Reads a request's body as text, the way the SDK's `toWebRequest` does: a declared `Content-Length` over
 * `maxBytes` is refused before anything is read, a body that grows past it is refused as soon as it does, and the
 * bytes are decoded as UTF-8 (a leading BOM dropped, invalid sequences replaced). GET and HEAD have no body (`''`).
 */
export async function readRequestBody(req: IncomingMessage, maxBytes: number): Promise<RequestBodyText> {
  if (req.method === 'GET' || req.method === 'HEAD') return '';
  const declared = req.headers['content-length'];
  if (Number(Array.isArray(declared) ? declared[0] : declared) > maxBytes) return undefined;
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of req as AsyncIterable<Buffer | string>) {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    received += bytes.byteLength;
    if (received > maxBytes) return undefined;
    chunks.push(bytes);
  }
  if (received === 0) return '';
  return new TextDecoder().decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received));
}
