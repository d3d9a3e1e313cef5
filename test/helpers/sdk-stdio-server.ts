import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { Readable } from 'node:stream';
import { watchProgressOrder } from './progress-order.js';
import { minimalEnv, serverEnv, stopAtTestEnd } from './server-process.js';
import { builtCli } from './temp-dir.js';

/** The era the SDK client negotiates: 2025-era `initialize`, or `auto` (the modern era with this server). */
export type Era = 'legacy' | 'auto';

type ClientOptions = NonNullable<ConstructorParameters<typeof Client>[1]>;

export interface SdkStdioOptions {
  era: Era;
  args: string[];
  env?: Record<string, string>;
  capabilities?: ClientOptions['capabilities'];
  listChanged?: ClientOptions['listChanged'];
}

export interface Connected {
  client: Client;
  transport: StdioClientTransport;
  /**
   * Every error the client saw (a stray stdout line would land here), less the client SDK's own reordering of a
   * progress notification the server sent in time (see `watchProgressOrder`).
   */
  errors: Error[];
  stderr: () => string;
  /** Closes the client (the server exits on end of input) and removes the server's own audit folder. */
  close: () => Promise<void>;
}

/** Spawns the built binary through the SDK's stdio transport and connects the real MCP client; ready once connected. */
export async function startSdkStdioServer(o: SdkStdioOptions): Promise<Connected> {
  const errors: Error[] = [];
  const client = new Client(
    { name: 'skills-mcp-test', version: '1.0.0' },
    {
      capabilities: o.capabilities ?? {},
      versionNegotiation: { mode: o.era },
      ...(o.listChanged === undefined ? {} : { listChanged: o.listChanged }),
    },
  );
  const { env, cleanup } = serverEnv(minimalEnv(), o.env);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [builtCli, ...o.args],
    env,
    stderr: 'pipe',
  });
  let stderr = '';
  (transport.stderr as Readable | null)?.on('data', (d: Buffer) => (stderr += d.toString()));
  const order = watchProgressOrder(transport);
  client.onerror = (e) => void (order.isReorderedByClient(e) || errors.push(e));
  let closed = false;
  const close = async () => {
    closed = true;
    unregister();
    await client.close();
    cleanup();
  };
  // The pid is known once the transport started; a server still running at the test's end is killed by it.
  let pid: number | null = null;
  const unregister = stopAtTestEnd(
    async () => void (closed || (await close())),
    () => {
      if (closed || pid === null) return;
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // It had exited already.
      }
    },
  );
  try {
    await client.connect(transport);
  } catch (e) {
    await close().catch(() => undefined);
    throw e;
  }
  pid = transport.pid;
  return { client, transport, errors, stderr: () => stderr, close };
}
