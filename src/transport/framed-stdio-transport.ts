import {
  deserializeMessage,
  serializeMessage,
  type JSONRPCMessage,
  type Transport,
} from '@modelcontextprotocol/server';
import type { Logger } from '../log.js';
import { knownResultJson } from '../mcp/result-json.js';
import { createLineFramer, type OversizedLine } from './line-framer.js';
import { sniffMessage } from './sniff-message.js';

/** JSON-RPC "Invalid Request": the answer to a message over the size limit. */
export const MESSAGE_TOO_LARGE_CODE = -32600;

export interface FramedStdioOptions {
  stdin: NodeJS.ReadableStream;
  stdout: NodeJS.WritableStream;
  /** Longest message accepted, in bytes; a longer line is discarded and answered with an error. */
  maxMessageBytes: number;
  log: Logger;
  /** Called once when reading stdin or writing stdout fails: the connection cannot go on. */
  onFailure: (err: Error) => void;
}

/**
 * The stdio wire for `serveStdio`: newline-delimited JSON-RPC on stdin/stdout, like the SDK's
 * `StdioServerTransport`, with a different framing layer. The SDK's reader buffers a line whole and, past its
 * maximum, throws and closes the connection, so one large message ends the server; this one discards an oversized
 * line as it streams in (memory stays near the limit however long the line), answers it with a JSON-RPC error and
 * keeps serving. Everything above the framing (era selection, sessions, handlers) stays with the SDK.
 */
export function createFramedStdioTransport(opts: FramedStdioOptions): Transport {
  const { stdin, stdout, maxMessageBytes, log } = opts;
  let closed = false;
  let failed = false;

  const write = (json: string) =>
    new Promise<void>((resolve, reject) => {
      stdout.write(json, (err) => (err ? reject(err) : resolve()));
    });

  const refuse = ({ bytes, head, tail }: OversizedLine) => {
    const { id, isResponse } = sniffMessage(head, tail);
    log.warn({ bytes, limit: maxMessageBytes, id, isResponse }, 'message over the size limit refused');
    // A response is never answered: its id is one of ours, and an error under it would reach the wrong request.
    if (closed || isResponse) return;
    const reply = {
      jsonrpc: '2.0',
      id,
      error: {
        code: MESSAGE_TOO_LARGE_CODE,
        message:
          `Message too large: ${bytes} bytes, over this server's limit of ${maxMessageBytes} bytes ` +
          '(max_message_bytes). Pass large data as a file path instead.',
        data: { bytes, limit: maxMessageBytes },
      },
    };
    write(`${JSON.stringify(reply)}\n`).catch((err: unknown) => transport.onerror?.(toError(err)));
  };

  const deliver = (line: Buffer) => {
    const text = line.toString('utf8').replace(/\r$/, '');
    if (text.trim() === '') return;
    let message: JSONRPCMessage;
    try {
      message = deserializeMessage(text);
    } catch (err) {
      // Like the SDK's reader: a line that is not JSON is skipped quietly; valid JSON that is not JSON-RPC is
      // reported (the log says what arrived).
      if (!(err instanceof SyntaxError)) transport.onerror?.(toError(err));
      return;
    }
    transport.onmessage?.(message);
  };

  const framer = createLineFramer({ maxLineBytes: maxMessageBytes, onLine: deliver, onOversized: refuse });

  const fail = (err: Error) => {
    if (failed || closed) return;
    failed = true;
    opts.onFailure(err);
    void transport.close();
  };
  const onData = (chunk: Buffer | string) =>
    framer.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk);
  const onEnd = () => {
    framer.end();
    void transport.close();
  };
  const onStdinError = (err: Error) => fail(err);
  // Stays attached after close: a write that fails late must not surface as an unhandled 'error' event.
  const onStdoutError = (err: Error) => fail(err);

  const transport: Transport = {
    start: () => {
      stdin.on('data', onData);
      stdin.on('end', onEnd);
      stdin.on('close', onEnd);
      stdin.on('error', onStdinError);
      stdout.on('error', onStdoutError);
      return Promise.resolve();
    },
    send: (message) =>
      closed ? Promise.reject(new Error('the stdio transport is closed')) : write(serialize(message)),
    close: () => {
      if (closed) return Promise.resolve();
      closed = true;
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.off('close', onEnd);
      stdin.pause();
      transport.onclose?.();
      return Promise.resolve();
    },
  };
  return transport;
}

const toError = (e: unknown): Error => (e instanceof Error ? e : new Error(String(e)));

/** One line of JSON; a result the server answers unchanged again and again is not serialized again. */
function serialize(message: JSONRPCMessage): string {
  if ('result' in message && message.jsonrpc === '2.0' && Object.keys(message).length === 3) {
    const json = knownResultJson(message.result);
    if (json !== undefined) return `{"result":${json},"jsonrpc":"2.0","id":${JSON.stringify(message.id)}}\n`;
  }
  return serializeMessage(message);
}
