import { isPostgresUrl } from '../audit/postgres/postgres-url.js';
import type { Config } from '../config/config-schema.js';
import type { Logger } from '../log.js';
import { fileApproverStore, type ApproverStore } from '../passkeys/approver-store.js';
import type { CliIo } from './io.js';

/**
 * The enrolled passkeys this server (or `skills-mcp approvers`) uses: with a PostgreSQL `--audit`, the database's
 * table, shared by every replica; else `approvers.json` in the state folder. `close` ends the database connection.
 */
export async function openApproverStore(
  config: Pick<Config, 'audit'>,
  io: Pick<CliIo, 'env'>,
  stateDir: string,
  log?: Logger,
): Promise<{ store: ApproverStore; close: () => Promise<void> }> {
  if (config.audit === undefined || !isPostgresUrl(config.audit))
    return { store: fileApproverStore(stateDir), close: () => Promise.resolve() };
  // Loaded only for a PostgreSQL log: the pg client stays off a single server's start-up path.
  const [{ openPgPool }, { pgApproverStore }] = await Promise.all([
    import('../audit/postgres/open-pg-pool.js'),
    import('../passkeys/pg-approver-store.js'),
  ]);
  const pool = openPgPool({ url: config.audit, env: io.env, max: 2, ...(log === undefined ? {} : { log }) });
  return { store: pgApproverStore(pool), close: () => pool.end() };
}
