import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { Readable } from 'node:stream';
import { join } from 'node:path';
import { watchProgressOrder } from './progress-order.js';
import { builtCli, tempDir } from './temp-dir.js';

export type Era = 'legacy' | 'auto';

export interface Connected {
  client: Client;
  transport: StdioClientTransport;
  /**
   * Every error the client saw (a stray stdout line would land here), less the client SDK's own reordering of a
   * progress notification the server sent in time (see `watchProgressOrder`).
   */
  errors: Error[];
  stderr: () => string;
  close: () => Promise<void>;
}

export interface ConnectOptions {
  era: Era;
  args: string[];
  env?: Record<string, string>;
  capabilities?: ConstructorParameters<typeof Client>[1] extends infer O
    ? O extends { capabilities?: infer C }
      ? C
      : never
    : never;
  listChanged?: ConstructorParameters<typeof Client>[1] extends infer O
    ? O extends { listChanged?: infer L }
      ? L
      : never
    : never;
}

/** Spawns the built binary and connects the real MCP client over stdio. */
export async function connectStdio(opts: ConnectOptions): Promise<Connected> {
  const errors: Error[] = [];
  const client = new Client(
    { name: 'skills-mcp-test', version: '1.0.0' },
    {
      capabilities: opts.capabilities ?? {},
      versionNegotiation: { mode: opts.era },
      ...(opts.listChanged === undefined ? {} : { listChanged: opts.listChanged }),
    },
  );
  // Every test server gets its own audit log unless the test names one: never the user's real log.
  const audit = opts.env?.SKILLS_MCP_AUDIT === undefined ? tempDir('skills-mcp-audit-') : undefined;
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [builtCli, ...opts.args],
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      HOME: process.env.HOME ?? '/tmp',
      ...(audit === undefined ? {} : { SKILLS_MCP_AUDIT: join(audit.dir, 'audit.db') }),
      ...opts.env,
    },
    stderr: 'pipe',
  });
  let stderr = '';
  (transport.stderr as Readable | null)?.on('data', (d: Buffer) => (stderr += d.toString()));
  const order = watchProgressOrder(transport);
  client.onerror = (e) => void (order.isReorderedByClient(e) || errors.push(e));
  await client.connect(transport);
  const close = async () => {
    await client.close();
    audit?.cleanup();
  };
  return { client, transport, errors, stderr: () => stderr, close };
}
