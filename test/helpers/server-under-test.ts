import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startHttpServer, type HttpServer, type HttpServerOptions } from './http-server.js';
import { startRawStdioServer, type RawServer, type RawStdioOptions } from './raw-stdio-server.js';
import { startSdkStdioServer, type Connected, type SdkStdioOptions } from './sdk-stdio-server.js';
import { tempDir } from './temp-dir.js';

/** What every transport takes on top of its own options: the server's skills and configuration. */
interface Common {
  /** Skill folders, each passed as `--skills`. */
  skills?: string[];
  /** `skills-mcp.yaml` text, written to a temp file passed as `--config` (removed once the server stopped). */
  config?: string;
  /** More server arguments, after those. */
  args?: string[];
}

type With<T> = Omit<T, 'args'> & Common;

export type StartServerOptions =
  | ({ transport: 'stdio'; client?: 'sdk' } & With<SdkStdioOptions>)
  | ({ transport: 'stdio'; client: 'raw' } & With<RawStdioOptions>)
  | ({ transport: 'http' } & With<HttpServerOptions>);

/**
 * The built binary under test, started the one way: spawned with its own audit log (unless `env` names one) and
 * stderr captured, connected over `transport` (the real SDK client, or raw JSON-RPC lines for `client: 'raw'`;
 * over HTTP an SDK client when `era` is given), ready once connected (or, over HTTP, once it logged its URL). It is
 * stopped on `close`/`end` (and killed by pid at the latest when the test file's run ends).
 */
export function startServer(
  o: { transport: 'stdio'; client?: 'sdk' } & With<SdkStdioOptions>,
): Promise<Connected>;
export function startServer(
  o: { transport: 'stdio'; client: 'raw' } & With<RawStdioOptions>,
): Promise<RawServer>;
export function startServer(o: { transport: 'http' } & With<HttpServerOptions>): Promise<HttpServer>;
export async function startServer(o: StartServerOptions): Promise<Connected | RawServer | HttpServer> {
  const { args, removeConfig } = serverArgs(o);
  const started =
    o.transport === 'http'
      ? startHttpServer({ ...o, args })
      : o.client === 'raw'
        ? startRawStdioServer({ ...o, args })
        : startSdkStdioServer({ ...o, args });
  try {
    const s = await started;
    if (removeConfig !== undefined) afterExit(s, removeConfig);
    return s;
  } catch (e) {
    removeConfig?.();
    throw e;
  }
}

function serverArgs(o: Common): { args: string[]; removeConfig?: () => void } {
  const skills = (o.skills ?? []).flatMap((s) => ['--skills', s]);
  if (o.config === undefined) return { args: [...skills, ...(o.args ?? [])] };
  const t = tempDir('skills-mcp-config-');
  const file = join(t.dir, 'skills-mcp.yaml');
  writeFileSync(file, o.config);
  return { args: [...skills, '--config', file, ...(o.args ?? [])], removeConfig: t.cleanup };
}

/** Runs `then` once the server has exited (for the SDK client: once it was closed). */
function afterExit(s: Connected | RawServer | HttpServer, then: () => void): void {
  if ('exited' in s) void s.exited.then(then);
  else if ('child' in s) void (s.child.exitCode !== null ? then() : s.child.once('exit', then));
  else {
    const close = s.close;
    s.close = () => close().finally(then);
  }
}

export type { Connected, Era } from './sdk-stdio-server.js';
export type { RawEra, RawServer, RpcResponse } from './raw-stdio-server.js';
export type { HttpServer } from './http-server.js';
