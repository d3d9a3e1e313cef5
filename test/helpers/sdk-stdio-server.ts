import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { Readable } from 'node:stream';
import { watchProgressOrder } from './progress-order.js';
import { killAtFileEnd, minimalEnv, serverEnv } from './server-process.js';
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
  /** The only protocol revisions a strict client of an older revision knows (the SDK's list unless given). */
  supportedProtocolVersions?: ClientOptions['supportedProtocolVersions'];
  /** A command the server runs under (`setpriv …`, `unshare …`): it ends by exec'ing the arguments after it. */
  prefix?: string[];
  /** The folder the server starts in (this process's unless given). */
  cwd?: string;
  /** `false`: no audit log of its own, for a server whose config or flags name one. */
  ownAudit?: boolean;
}

export interface Connected {
  client: Client;
  transport: StdioClientTransport;
  /**
   * Every error the client saw (a stray stdout line would land here), less the client SDK's own reordering of a
   * progress notification the server sent in time (see `watchProgressOrder`).
   */
  errors: Error[];
  /** The messages of the progress notifications the server sent before each response, in the order they came. */
  progressInTime: () => string[];
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
      ...(o.supportedProtocolVersions === undefined
        ? {}
        : { supportedProtocolVersions: o.supportedProtocolVersions }),
    },
  );
  const { env, cleanup } = serverEnv(minimalEnv(), o.env, o.ownAudit);
  const [command, ...args] = [...(o.prefix ?? []), process.execPath, builtCli, ...o.args] as [
    string,
    ...string[],
  ];
  const transport = new StdioClientTransport({
    command,
    args,
    env,
    stderr: 'pipe',
    ...(o.cwd === undefined ? {} : { cwd: o.cwd }),
  });
  let stderr = '';
  (transport.stderr as Readable | null)?.on('data', (d: Buffer) => (stderr += d.toString()));
  const order = watchProgressOrder(transport);
  client.onerror = (e) => void (order.isReorderedByClient(e) || errors.push(e));
  const close = async () => {
    unregister();
    await client.close();
    cleanup();
  };
  // A server still running when the file's run ends is killed by its pid (which the transport forgets once it exited).
  const unregister = killAtFileEnd(() => {
    const pid = transport.pid;
    if (pid === null) return;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // It had exited already.
    }
  });
  try {
    await client.connect(transport);
  } catch (e) {
    await close().catch(() => undefined);
    throw e;
  }
  return { client, transport, errors, progressInTime: order.inTimeMessages, stderr: () => stderr, close };
}
