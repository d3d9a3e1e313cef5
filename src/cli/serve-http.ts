import type { ExitCode } from './io.js';
import type { ServeContext } from './serve-context.js';

/** Serves Streamable HTTP until SIGINT/SIGTERM. */
export function runHttp(ctx: ServeContext): Promise<ExitCode> {
  ctx.io.err('skills-mcp: --http is not available in this build yet; serve over stdio instead.\n');
  return Promise.resolve(2);
}
