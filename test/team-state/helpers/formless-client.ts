import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { TOKEN } from './team.js';

/** A team config whose approvals go to each replica's console (opened by no browser). */
export const consoleConfig = (o: { waitMs: number; timeoutMs: number }): string =>
  'approval:\n  mode: ask\n  console: true\n  console_open_browser: false\n' +
  `  console_wait_ms: ${o.waitMs}\n  timeout_ms: ${o.timeoutMs}\n`;

/**
 * An MCP client with the team's token that declares no elicitation: its approvals go to the server's console.
 * 2025-era by default (a session of its own on that replica); `auto`: 2026-07-28, whose session is the token's
 * principal on every replica. Added to `clients`, for the test to close.
 */
export async function formlessClient(
  url: string,
  clients: Client[],
  era: 'legacy' | 'auto' = 'legacy',
): Promise<Client> {
  const client = new Client(
    { name: 'formless', version: '1.0.0' },
    { capabilities: {}, versionNegotiation: { mode: era } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
    }),
  );
  clients.push(client);
  return client;
}

export type ToolResult = Awaited<ReturnType<Client['callTool']>>;

/** A call of the fixture's `echo` that waits for a person; handled here too, so a test failing first leaves no rejection. */
export function echo(client: Client, text: string, timeoutMs?: number): Promise<ToolResult> {
  const r = client.callTool(
    { name: 'echo', arguments: { text } },
    timeoutMs === undefined ? undefined : { timeout: timeoutMs },
  );
  r.catch(() => undefined);
  return r;
}
