import { createServer, request, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, describe, expect, it } from 'vitest';
import {
  singleMessage,
  writeWebResponse,
  type EventStreamHead,
} from '../../src/transport/http/write-web-response.js';

const enc = new TextEncoder();
const ANSWER = { jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'line one\nline two' }] } };
const event = (message: unknown, id?: string) =>
  `event: message\n${id === undefined ? '' : `id: ${id}\n`}data: ${JSON.stringify(message)}\n\n`;
const SSE_HEADERS = {
  'Content-Type': 'text/event-stream',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
  'mcp-session-id': 'session-1',
};

/**
 * An event stream that sends each step's text, or waits `ms` when a step is a number, then ends (or fails, with
 * `fail`).
 */
function stream(steps: (string | number)[], fail = false): Response {
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const step of steps) {
        if (typeof step === 'number') await sleep(step);
        else controller.enqueue(enc.encode(step));
      }
      // A few microtasks, still within the turn: the reader takes what was sent before the stream fails.
      for (let i = 0; i < 5; i++) await Promise.resolve();
      if (fail) controller.error(new Error('the body failed'));
      else controller.close();
    },
  });
  return new Response(body, { status: 200, headers: SSE_HEADERS });
}

interface Got {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** When the head arrived, and when the body ended (ms after the request). */
  headAt: number;
  endAt: number;
}

describe('writeWebResponse (a real Node HTTP server and client)', () => {
  let server: Server | undefined;
  afterEach(async () => {
    await new Promise((r) => server?.close(r) ?? r(undefined));
    server = undefined;
  });

  async function serve(make: () => Response, mode: EventStreamHead): Promise<Got> {
    server = createServer((req, res) => {
      void writeWebResponse(res, make(), new AbortController().signal, mode);
    });
    await new Promise<void>((r) => server!.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    const t0 = performance.now();
    return new Promise((resolve, reject) => {
      const req = request({ port, host: '127.0.0.1', method: 'POST', agent: false }, (res) => {
        const headAt = performance.now() - t0;
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body,
            headAt,
            endAt: performance.now() - t0,
          }),
        );
      });
      req.on('error', reject);
      req.end();
    });
  }

  it('sends a stream that carried one message and ended within the first turn as that message in JSON', async () => {
    const got = await serve(() => stream([event(ANSWER)]), 'next-turn');
    expect(got.status).toBe(200);
    expect(got.headers['content-type']).toBe('application/json');
    expect(got.headers['content-length']).toBe(String(Buffer.byteLength(got.body)));
    expect(got.headers['mcp-session-id']).toBe('session-1');
    expect(got.headers['x-accel-buffering']).toBeUndefined();
    expect(got.headers['cache-control']).toBeUndefined();
    expect(JSON.parse(got.body)).toEqual(ANSWER);
  });

  it('keeps the event stream, head first, when the answer comes after the first turn', async () => {
    const got = await serve(() => stream([200, event(ANSWER)]), 'next-turn');
    expect(got.headers['content-type']).toBe('text/event-stream');
    expect(got.body).toBe(event(ANSWER));
    expect(got.endAt - got.headAt).toBeGreaterThan(100);
  });

  it('keeps the event stream when a message is followed by more after the first turn', async () => {
    const ask = { jsonrpc: '2.0', id: 1, method: 'elicitation/create', params: {} };
    const got = await serve(() => stream([event(ask), 200, event(ANSWER)]), 'next-turn');
    expect(got.headers['content-type']).toBe('text/event-stream');
    expect(got.body).toBe(event(ask) + event(ANSWER));
  });

  it('keeps the event stream for two events in the first turn, and for an event a client could resume from', async () => {
    const note = { jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'x' } };
    const two = await serve(() => stream([event(note), event(ANSWER)]), 'next-turn');
    expect(two.headers['content-type']).toBe('text/event-stream');
    expect(two.body).toBe(event(note) + event(ANSWER));
    await new Promise((r) => server?.close(r));
    const resumable = await serve(() => stream([event(ANSWER, 'stream-1_0')]), 'next-turn');
    expect(resumable.headers['content-type']).toBe('text/event-stream');
    expect(resumable.body).toBe(event(ANSWER, 'stream-1_0'));
  });

  it('never makes a JSON answer of a stream that failed after its message', async () => {
    const got = await serve(() => stream([event(ANSWER)], true), 'next-turn');
    expect(got.headers['content-type']).toBe('text/event-stream');
    expect(got.body).toBe(event(ANSWER));
  });

  it('leaves other modes as event streams', async () => {
    const got = await serve(() => stream([event(ANSWER)]), 'first-event');
    expect(got.headers['content-type']).toBe('text/event-stream');
    expect(got.body).toBe(event(ANSWER));
  });
});

describe('singleMessage', () => {
  const of = (text: string) => singleMessage([enc.encode(text)]);
  const decoded = (bytes: Uint8Array | undefined) =>
    bytes === undefined ? undefined : new TextDecoder().decode(bytes);

  it('takes the data of one message event holding a JSON object or array', () => {
    expect(decoded(of('event: message\ndata: {"a":1}\n\n'))).toBe('{"a":1}');
    expect(decoded(of('event: message\ndata: [{"a":1}]\n\n'))).toBe('[{"a":1}]');
  });

  it('refuses anything else', () => {
    for (const text of [
      'event: message\ndata: {"a":1}\n', // not ended
      'event: message\ndata: {"a":\ndata: 1}\n\n', // two data lines
      'event: message\ndata: {"a":"\r"}\n\n', // a carriage return ends an SSE line
      'event: message\nid: 1\ndata: {"a":1}\n\n', // an event id
      'event: ping\ndata: {"a":1}\n\n', // another event
      ': comment\nevent: message\ndata: {"a":1}\n\n',
      'event: message\ndata: hello\n\n', // not JSON
      'event: message\ndata: \n\n',
    ])
      expect(of(text), JSON.stringify(text)).toBeUndefined();
    expect(singleMessage([])).toBeUndefined();
    expect(
      singleMessage([enc.encode('event: message\ndata: {}\n\n'), enc.encode('event: message\ndata: {}\n\n')]),
    ).toBeUndefined();
  });
});
