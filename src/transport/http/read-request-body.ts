import type { IncomingMessage } from 'node:http';

/** A body read in full, or `undefined`: over the limit (declared or received). */
export type RequestBodyText = string | undefined;

/**
 * Reads a request's body as text, the way the SDK's `toWebRequest` does: a declared `Content-Length` over
 * `maxBytes` is refused before anything is read, a body that grows past it is refused as soon as it does (nothing
 * more of it is read), and the bytes are decoded as UTF-8 (a leading BOM dropped, invalid sequences replaced). GET
 * and HEAD have no body (`''`). Rejects when the request fails or closes before its end.
 */
export function readRequestBody(req: IncomingMessage, maxBytes: number): Promise<RequestBodyText> {
  if (req.method === 'GET' || req.method === 'HEAD') return Promise.resolve('');
  const declared = req.headers['content-length'];
  if (Number(Array.isArray(declared) ? declared[0] : declared) > maxBytes) return Promise.resolve(undefined);
  return new Promise<RequestBodyText>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let received = 0;
    const stop = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
      req.off('close', onClose);
    };
    const onData = (chunk: Buffer | string) => {
      const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
      received += bytes.byteLength;
      if (received <= maxBytes) return void chunks.push(bytes);
      // Nothing more is read: the 413 answer closes the connection.
      stop();
      req.pause();
      resolve(undefined);
    };
    const onEnd = () => {
      stop();
      if (received === 0) return resolve('');
      resolve(new TextDecoder().decode(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, received)));
    };
    const onError = (err: Error) => {
      stop();
      reject(err);
    };
    const onClose = () => {
      stop();
      reject(Object.assign(new Error('Premature close'), { code: 'ERR_STREAM_PREMATURE_CLOSE' }));
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
    req.on('close', onClose);
  });
}
