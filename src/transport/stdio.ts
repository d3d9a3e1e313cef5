import { serveStdio } from '@modelcontextprotocol/server/stdio';
import type { McpServer } from '@modelcontextprotocol/server';
import type { Logger } from '../log.js';

export interface StdioServing {
  /** Closes the connection (idempotent). */
  close(): Promise<void>;
  /** Resolves when the client went away (stdin ended) or close() was called. */
  closed: Promise<void>;
}

/**
 * Serves MCP on stdin/stdout for both protocol eras (the SDK pins one instance per connection). stdout carries
 * only protocol messages. The connection ends when stdin ends.
 */
export function serveOverStdio(
  build: () => McpServer,
  opts: { stdin: NodeJS.ReadableStream; log: Logger },
): StdioServing {
  const { log } = opts;
  let resolveClosed!: () => void;
  const closed = new Promise<void>((r) => (resolveClosed = r));
  const handle = serveStdio(build, { onerror: (err) => log.warn({ err }, 'stdio transport error') });
  let closing: Promise<void> | undefined;
  const close = () => {
    closing ??= handle
      .close()
      .catch((err: unknown) => log.warn({ err }, 'error while closing stdio'))
      .finally(resolveClosed);
    return closing;
  };
  opts.stdin.once('end', () => void close());
  opts.stdin.once('close', () => void close());
  return { close, closed };
}
