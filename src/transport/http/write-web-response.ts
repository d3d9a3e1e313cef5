import type { ServerResponse } from 'node:http';

/** When an event stream's head is sent if no event is ready: at once, after one turn of the event loop, or with the first event. */
export type EventStreamHead = 'now' | 'next-turn' | 'first-event';

const isEventStream = (response: Response) =>
  response.headers.get('content-type')?.toLowerCase().startsWith('text/event-stream') === true;

/**
 * Writes a web `Response` to a Node response: status and headers, then the body chunk by chunk (waiting for
 * `drain` when the socket is full), until the body ends or `signal` aborts (the client went away: the body is then
 * cancelled, which ends the exchange for the SDK). An event stream's events are written as they come, but those
 * that come together (an answer and the stream's end, in one turn) leave in one write; any other body (a JSON
 * answer, made whole) is written with the response's end, so head, body and end leave in one write. Never
 * rejects: a body that fails midway ends the response.
 */
export async function writeWebResponse(
  res: ServerResponse,
  response: Response,
  signal: AbortSignal,
  eventStreamHead: EventStreamHead = 'first-event',
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
  const streaming = isEventStream(response);
  let head: NodeJS.Immediate | undefined;
  if (streaming && eventStreamHead === 'now') res.flushHeaders();
  else if (streaming && eventStreamHead === 'next-turn') head = setImmediate(() => res.flushHeaders());
  let corked = false;
  const uncork = () => {
    corked = false;
    res.uncork();
  };
  let held: Uint8Array | undefined;
  let waiting: (() => void) | undefined;
  const wake = () => {
    waiting?.();
    waiting = undefined;
  };
  const cancel = () => {
    wake();
    void reader.cancel().catch(() => undefined);
  };
  res.on('drain', wake);
  signal.addEventListener('abort', cancel, { once: true });
  if (signal.aborted) cancel();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done || signal.aborted) break;
      clearImmediate(head);
      // A whole answer: hold each chunk until the next one shows it was not the last. An event: write it now, but
      // let what else comes in this turn (the stream's end) join it.
      const chunk = streaming ? value : held;
      held = streaming ? undefined : value;
      if (chunk === undefined) continue;
      if (streaming && !corked) {
        corked = true;
        res.cork();
        process.nextTick(uncork);
      }
      if (!res.write(chunk) && !signal.aborted) await new Promise<void>((resolve) => (waiting = resolve));
    }
  } catch {
    // The body failed midway: end what was sent.
  } finally {
    clearImmediate(head);
    res.off('drain', wake);
    signal.removeEventListener('abort', cancel);
    if (!signal.aborted) reader.releaseLock();
  }
  if (held !== undefined && !signal.aborted) res.end(held);
  else res.end();
}
