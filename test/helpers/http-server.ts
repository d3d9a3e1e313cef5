import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { spawnServer, type ServerProcess } from './server-process.js';
import { waitFor } from './wait-for.js';

export interface HttpServerOptions {
  /** Server arguments after `--http --port 0`. */
  args: string[];
  /** On top of this process's environment less `SKILLS_MCP_TOKEN` (or, with `baseEnv: 'minimal'`, PATH and HOME). */
  env?: Record<string, string>;
  baseEnv?: 'minimal' | 'inherit';
  /** A command the server runs under, e.g. `['prlimit', '--nofile=256']`. */
  prefix?: string[];
  /** The SDK client's era once it listens; no client unless given ('auto' negotiates the modern era). */
  era?: 'legacy' | 'auto';
  /** The bearer token the client sends. */
  token?: string;
  /** Whether the client declares form elicitation (it does unless `false`). */
  elicitation?: boolean;
}

export interface HttpServer extends ServerProcess {
  /** The `/mcp` endpoint the server logged once it listened. */
  url: string;
  /** The connected SDK client, when an era was given. */
  client?: Client;
  /** Errors the client reported (a clean run has none). */
  errors: Error[];
  /** Closes the client (if any), then stops the server with SIGTERM and resolves with its exit code. */
  close: () => Promise<number | null>;
}

/** Waits for the "serving … at URL" line the binary writes to stderr once it listens; fails if it exits first. */
export async function servedUrl(s: Pick<ServerProcess, 'stderr' | 'exited'>): Promise<string> {
  let code: number | null | undefined;
  void s.exited.then((c) => (code = c ?? null));
  const url = await waitFor(
    () =>
      /over Streamable HTTP at (http:\/\/\S+\/mcp)/.exec(s.stderr())?.[1] ?? (code !== undefined && 'exited'),
    120_000,
    'the server to listen',
  );
  if (url === 'exited') throw new Error(`server exited (${code}) before listening:\n${s.stderr()}`);
  return url;
}

/** Spawns the built binary over Streamable HTTP on a free port; ready once it logged its URL (and the client connected). */
export async function startHttpServer(o: HttpServerOptions): Promise<HttpServer> {
  const server = spawnServer({
    args: ['--http', '--port', '0', ...o.args],
    baseEnv: o.baseEnv ?? 'inherit',
    ...(o.env === undefined ? {} : { env: o.env }),
    ...(o.prefix === undefined ? {} : { prefix: o.prefix }),
  });
  const errors: Error[] = [];
  let client: Client | undefined;
  try {
    const url = await servedUrl(server);
    if (o.era !== undefined) {
      client = new Client(
        { name: 'http-test', version: '1.0.0' },
        {
          capabilities: o.elicitation === false ? {} : { elicitation: { form: {} } },
          versionNegotiation: { mode: o.era },
        },
      );
      client.onerror = (err) => errors.push(err);
      const headers = o.token === undefined ? undefined : { authorization: `Bearer ${o.token}` };
      await client.connect(
        new StreamableHTTPClientTransport(
          new URL(url),
          headers === undefined ? {} : { requestInit: { headers } },
        ),
      );
    }
    const close = async () => {
      await client?.close().catch(() => undefined);
      return server.stop('SIGTERM');
    };
    return { ...server, url, ...(client === undefined ? {} : { client }), errors, close };
  } catch (e) {
    await server.stop('SIGKILL');
    throw e;
  }
}
