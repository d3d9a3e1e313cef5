import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { spawnServer } from './server-process.js';
import { waitFor } from './wait-for.js';

/** Protocol eras as a raw client speaks them: 2025-era `initialize`, or the 2026-07-28 per-request envelope. */
export type RawEra = 'legacy' | 'modern';

export interface RpcResponse {
  jsonrpc: '2.0';
  id: string | number | null;
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: Record<string, unknown> };
}

export interface RawServer {
  child: ChildProcessWithoutNullStreams;
  era: RawEra;
  /** Every stdout line, each parsed as JSON (a line that is not JSON fails the test that reads it). */
  responses: () => RpcResponse[];
  stderr: () => string;
  /** Writes bytes to the server's stdin, waiting for the pipe to drain (the test never holds more than one chunk). */
  write: (bytes: string | Buffer) => Promise<void>;
  /** A request in this era's shape (with the `_meta` envelope when modern), as one line. */
  line: (id: string | number, method: string, params?: Record<string, unknown>) => string;
  /** Sends a request and resolves with its response. */
  request: (id: string | number, method: string, params?: Record<string, unknown>) => Promise<RpcResponse>;
  /** Resolves with the response for `id` once it arrived. */
  response: (id: string | number | null, ms?: number) => Promise<RpcResponse>;
  /** Peak (VmHWM) and current (VmRSS) resident memory of the server, in KiB, from /proc. */
  memory: () => { peakKiB: number; rssKiB: number };
  /** Closes stdin and resolves with the exit code. */
  end: () => Promise<number | null>;
}

export interface RawStdioOptions {
  era: RawEra;
  args: string[];
  env?: Record<string, string>;
}

const MODERN_META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientCapabilities': {},
  'io.modelcontextprotocol/clientInfo': { name: 'raw-stdio-test', version: '1.0.0' },
};

/** Spawns the built binary over pipes and opens a connection in `era` by writing JSON-RPC lines by hand. */
export async function startRawStdioServer({ era, args, env }: RawStdioOptions): Promise<RawServer> {
  const server = spawnServer({ args, stdin: 'pipe', ...(env === undefined ? {} : { env }) });
  const child = server.proc as RawServer['child'];
  const parsed: RpcResponse[] = [];
  let pending = '';
  child.stdout.on('data', (d: Buffer) => {
    pending += d.toString('utf8');
    const lines = pending.split('\n');
    pending = lines.pop()!;
    for (const l of lines) parsed.push(JSON.parse(l) as RpcResponse);
  });
  // 'close' (not 'exit'): every stdout line has been read by then.
  const closed = once(child, 'close') as Promise<[number | null]>;

  const write = async (bytes: string | Buffer) => {
    if (!child.stdin.write(bytes)) await once(child.stdin, 'drain');
  };
  const line = (id: string | number, method: string, params: Record<string, unknown> = {}) =>
    `${JSON.stringify({
      jsonrpc: '2.0',
      id,
      method,
      params: era === 'modern' ? { ...params, _meta: MODERN_META } : params,
    })}\n`;
  const response = async (id: string | number | null, ms = 60_000) => {
    await waitFor(() => parsed.some((r) => r.id === id), ms, `the response to ${JSON.stringify(id)}`);
    return parsed.find((r) => r.id === id)!;
  };
  const request = async (id: string | number, method: string, params?: Record<string, unknown>) => {
    await write(line(id, method, params));
    return response(id);
  };
  const memory = () => {
    const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
    const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)![1]);
    return { peakKiB: kib('VmHWM'), rssKiB: kib('VmRSS') };
  };
  const end = async () => {
    child.stdin.end();
    const [code] = await closed;
    return code;
  };

  if (era === 'legacy') {
    await request(0, 'initialize', {
      protocolVersion: '2025-06-18',
      capabilities: {},
      clientInfo: { name: 'raw-stdio-test', version: '1.0.0' },
    });
    await write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
  } else {
    await request(0, 'server/discover');
  }
  return {
    child,
    era,
    responses: () => parsed,
    stderr: server.stderr,
    write,
    line,
    request,
    response,
    memory,
    end,
  };
}
