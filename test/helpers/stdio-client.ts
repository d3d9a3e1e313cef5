import { startServer } from './server-under-test.js';
import type { Connected, SdkStdioOptions } from './sdk-stdio-server.js';

export type { Connected, Era } from './sdk-stdio-server.js';
export type ConnectOptions = SdkStdioOptions;

/** The built binary over stdio with the real MCP client: `startServer({transport: 'stdio', ...})`. */
export function connectStdio(opts: ConnectOptions): Promise<Connected> {
  return startServer({ transport: 'stdio', ...opts });
}
