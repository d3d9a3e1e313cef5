import { builtCli } from '../../helpers/temp-dir.js';
import { spawnServer, type ServerProcess } from '../../helpers/server-process.js';

export { servedUrl } from '../../helpers/http-server.js';

export const CLI = builtCli;

export type SpawnedServer = ServerProcess;

/**
 * Runs the built binary with `args` as given (no `--http` added: a test may mean it to fail first) in this
 * process's environment less `SKILLS_MCP_TOKEN`, under `prefix` (e.g. `['prlimit', '--nofile=256']`). For a server
 * a test just connects to, use `startServer({transport: 'http'})`.
 */
export function spawnCli(
  args: string[],
  env: Record<string, string> = {},
  prefix: string[] = [],
): SpawnedServer {
  return spawnServer({ args, env, prefix, baseEnv: 'inherit' });
}
