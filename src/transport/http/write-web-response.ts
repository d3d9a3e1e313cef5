import type { ServerResponse } from 'node:http';

/**
 * Writes a web `Response` to a Node response as the SDK's `toNodeHandler` does: status and headers, then the body
 * chunk by chunk (waiting for `drain` when the socket is full), until the body ends or `signal` aborts (the client
 * went away). Never rejects: a body that fails midway ends the response.
 */
export async function writeWebResponse(
  res: ServerResponse,
  response: Response,
  signal: AbortSignal,
): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  res.writeHead(response.status, headers);
  const body = response.body;
  if (body === null) {
    res.end();
    return;
  }
  const reader: ReadableStreamDefaultReader<Uint8Array> = body.getReader();
  let waiting: (() => void) | undefined;
  const wake = () => {
    waiting?.();
    waiting = undefined;
  };
  res.on('drain', wake);
  signal.addEventListener('abort', wake, { once: true });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || signal.aborted) break;
      if (!res.write(value) && !signal.aborted) await new Promise<void>((resolve) => (waiting = resolve));
    }
  } catch {
    // The body failed midway: end what was sent.
  } finally {
    res.off('drain', wake);
    signal.removeEventListener('abort', wake);
    if (signal.aborted) void reader.cancel().catch(() => undefined);
    else reader.releaseLock();
  }
  res.end();
}
