import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';

export type Era = 'legacy' | 'auto';

export interface Connected {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** Errors the client reported (a clean run has none). */
  errors: Error[];
}

/**
 * A real MCP client over Streamable HTTP; 'auto' negotiates the modern (2026-07-28) era with this server. `fetch`
 * replaces the transport's (to watch its exchanges).
 */
export async function connectClient(
  url: string,
  era: Era,
  token?: string,
  fetch?: typeof globalThis.fetch,
): Promise<Connected> {
  const client = new Client(
    { name: 'http-test', version: '1.0.0' },
    { capabilities: { elicitation: { form: {} } }, versionNegotiation: { mode: era } },
  );
  const errors: Error[] = [];
  client.onerror = (err) => errors.push(err);
  const transport = new StreamableHTTPClientTransport(new URL(url), {
    ...(token === undefined ? {} : { requestInit: { headers: { authorization: `Bearer ${token}` } } }),
    ...(fetch === undefined ? {} : { fetch }),
  });
  await client.connect(transport);
  return { client, transport, errors };
}
