import type { RawEra, RawServer } from './raw-stdio-server.js';
import { startServer } from './server-under-test.js';

export type { RawEra, RawServer, RpcResponse } from './raw-stdio-server.js';

/** The built binary over stdio, spoken to in raw JSON-RPC lines: `startServer({transport: 'stdio', client: 'raw'})`. */
export function startRawServer(
  era: RawEra,
  args: string[],
  env: Record<string, string> = {},
): Promise<RawServer> {
  return startServer({ transport: 'stdio', client: 'raw', era, args, env });
}
