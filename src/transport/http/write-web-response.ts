import type { ServerResponse } from 'node:http';

/**
 * When an event stream's head is sent if no event is ready: at once; after one turn of the event loop, where a
 * stream that carried one message and ended within that turn leaves as that message in JSON instead; or with the
 * first event.
 */
export type EventStreamHead = 'now' | 'next-turn' | 'first-event';

const isEventStream = (response: Response) =>
  response.headers.get('content-type')?.toLowerCase().startsWith('text/event-stream') === true;

const LF = 0x0a;
const CR = 0x0d;
const MESSAGE_EVENT = new TextEncoder().encode('event: message\ndata: ');
/** Headers that describe an event stream, not a JSON answer. */
const STREAM_HEADERS = new Set([
  'content-type',
  'content-length',
  'cache-control',
  'connection',
  'x-accel-buffering',
]);

/**
 * The JSON message an event stream carried, if it carried exactly one event, written as `event: message`, one
 * `data:` line holding a JSON object or array, and nothing else (no event id to resume from, no retry, no comment);
 * undefined for anything else, which stays an event stream.
 */
export function singleMessage(chunks: readonly Uint8Array[]): Uint8Array | undefined {
  if (chunks.length !== 1) return undefined;
  const c = chunks[0]!;
  const start = MESSAGE_EVENT.length;
  const end = c.length - 2;
  if (end <= start || c[end] !== LF || c[end + 1] !== LF) return undefined;
  for (let i = 0; i < start; i++) if (c[i] !== MESSAGE_EVENT[i]) return undefined;
  if (c[start] !== 0x7b && c[start] !== 0x5b) return undefined; // '{' or '['
  const data = c.subarray(start, end);
  return data.includes(LF) || data.includes(CR) ? undefined : data;
}

/**
 * Writes a web `Response` to a Node response: status and headers, then the body chunk by chunk (waiting for
 * `drain` when the socket is full), until the body ends or `signal` aborts (the client went away: the body is then
 * cancelled, which ends the exchange for the SDK). An event stream's events are written as they come, but those
 * that come together (an answer and the stream's end, in one turn) leave in one write; any other body (a JSON
 * answer, made whole) is written with the response's end, so head, body and end leave in one write. With
 * `next-turn`, an event stream that carried a single message and ended before its head was due (the SDK ends a
 * POST's stream once the POST is answered, or when its session closes) is sent as that message in a JSON body
 * (`application/json`, which a Streamable HTTP client accepts for any POST): the client then has no event stream to
 * parse. Never rejects: a body that fails midway ends the response, and is never made a JSON answer.
 */
export async function writeWebResponse(
  res: ServerResponse,
  response: Response,
  signal: AbortSignal,
  eventStreamHead: EventStreamHead = 'first-event',
): Promise<void> {
  const headers: Record<string, string> = {};
  for (const [name, value] of response.headers) headers[name] = value;
  const body = response.body;
  if (body === null) {
    res.writeHead(response.status, headers).end();
    return;
  }
  const reader: ReadableStreamDefaultReader<Uint8Array> = body.getReader();
  const streaming = isEventStream(response);
  // An event stream's chunks that came before its head was due (`next-turn`), and the head with them.
  let early: Uint8Array[] | undefined = streaming && eventStreamHead === 'next-turn' ? [] : undefined;
  let head: NodeJS.Immediate | undefined;
  const sendEarly = () => {
    clearImmediate(head);
    const chunks = early ?? [];
    early = undefined;
    res.writeHead(response.status, headers);
    if (chunks.length === 0) res.flushHeaders();
    for (const c of chunks) res.write(c);
  };
  if (early !== undefined) head = setImmediate(sendEarly);
  else res.writeHead(response.status, headers);
  if (streaming && eventStreamHead === 'now') res.flushHeaders();
  let corked = false;
  const uncork = () => {
    if (!corked) return;
    corked = false;
    res.uncork();
  };
  let held: Uint8Array | undefined;
  let failed = false;
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
      // Before the head is due, one event waits to see whether the stream's end follows it.
      if (early !== undefined && early.push(value) === 1) continue;
      if (streaming && !corked) {
        corked = true;
        res.cork();
        process.nextTick(uncork);
      }
      if (early !== undefined) {
        sendEarly();
        continue;
      }
      clearImmediate(head);
      // A whole answer: hold each chunk until the next one shows it was not the last. An event: write it now, but
      // let what else comes in this turn (the stream's end) join it.
      const chunk = streaming ? value : held;
      held = streaming ? undefined : value;
      if (chunk === undefined) continue;
      if (!res.write(chunk) && !signal.aborted) await new Promise<void>((resolve) => (waiting = resolve));
    }
  } catch {
    // The body failed midway: end what was sent.
    failed = true;
  } finally {
    clearImmediate(head);
    res.off('drain', wake);
    signal.removeEventListener('abort', cancel);
    if (!signal.aborted) reader.releaseLock();
  }
  if (early !== undefined) {
    const message = signal.aborted || failed ? undefined : singleMessage(early);
    if (message === undefined) sendEarly();
    else return void endWithJson(res, response.status, headers, message);
  }
  // Ended while corked, Node 22 and later send the response's last chunk ahead of what the cork held: the client
  // gets a malformed chunked body and never sees the event. What was written goes out first.
  uncork();
  if (held !== undefined && !signal.aborted) res.end(held);
  else res.end();
}

function endWithJson(res: ServerResponse, status: number, headers: Record<string, string>, json: Uint8Array) {
  const kept = Object.entries(headers).filter(([name]) => !STREAM_HEADERS.has(name));
  res
    .writeHead(status, {
      ...Object.fromEntries(kept),
      'content-type': 'application/json',
      'content-length': String(json.byteLength),
    })
    .end(json);
}
