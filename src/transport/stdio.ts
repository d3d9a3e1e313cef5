import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { McpServer } from '@modelcontextprotocol/server';
import type { Logger } from '../log.js';
import { createFramedStdioTransport } from './framed-stdio-transport.js';

/** Why a stdio connection ended. */
export type StdioEnd = { reason: 'client_closed' } | { reason: 'transport_failed'; error: Error };

export interface StdioServing {
  /** Closes the connection (idempotent). */
  close(): Promise<void>;
  /** Resolves when the client went away (stdin ended), the transport failed, or close() was called. */
  closed: Promise<StdioEnd>;
}

/**
 * Serves MCP on stdin/stdout for both protocol eras (the SDK pins one instance per connection). stdout carries
 * only protocol messages. The connection ends when stdin ends, or fails when stdin cannot be read or stdout
 * written (a client that closed its end of the pipe). Messages over `maxMessageBytes` are refused one by one.
 */
export function serveOverStdio(
  build: () => McpServer,
  opts: { stdin: NodeJS.ReadableStream; stdout: NodeJS.WritableStream; maxMessageBytes: number; log: Logger },
): StdioServing {
  const { log } = opts;
  let end: StdioEnd = { reason: 'client_closed' };
  let resolveClosed!: (end: StdioEnd) => void;
  const closed = new Promise<StdioEnd>((r) => (resolveClosed = r));
  const transport = createFramedStdioTransport({
    stdin: opts.stdin,
    stdout: opts.stdout,
    maxMessageBytes: opts.maxMessageBytes,
    log,
    onFailure: (error) => {
      end = { reason: 'transport_failed', error };
      void close();
    },
  });
  const handle = serveStdio(build, {
    transport,
    onerror: (err) => log.warn({ err }, 'stdio transport error'),
  });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= handle
      .close()
      .catch((err: unknown) => log.warn({ err }, 'error while closing stdio'))
      .finally(() => resolveClosed(end));
    return closing;
  };
  opts.stdin.once('end', () => void close());
  opts.stdin.once('close', () => void close());
  return { close, closed };
}
