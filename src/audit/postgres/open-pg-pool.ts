import { homedir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import type { Logger } from '../../log.js';
import { pgConnectionConfig } from './pg-connection-config.js';
import { readPgpass } from './read-pgpass.js';

export interface PgPoolOptions {
  /** `postgres://user@host:port/db` or, for a unix socket, `postgres://user@/db?host=/run/postgresql`. */
  url: string;
  /**
   * Where the password comes from when the URL holds none: `PGPASSWORD`, else the password file `PGPASSFILE`
   * (default `~/.pgpass`); `USER` is the user when the URL names none. Never logged.
   */
  env: Readonly<Record<string, string | undefined>>;
  /** Connections at most (default 4). */
  max?: number;
  /** How long to wait for a connection before failing (default 5 s). */
  connectTimeoutMs?: number;
  log?: Logger;
}

/**
 * A `pg` pool for the audit log. Every connection runs with `synchronous_commit = on` (a COMMIT returns once its WAL
 * is flushed). A connection that breaks while idle (the server stopped or restarted) is dropped from the pool and
 * logged without details: nothing throws out of the pool, so a database that goes away fails the next query, not
 * the process. Throws CONFIG_INVALID for a URL it cannot use.
 */
export function openPgPool(o: PgPoolOptions): pg.Pool {
  const c = pgConnectionConfig(o.url, o.env.USER === undefined ? {} : { user: o.env.USER });
  const fromUrl = c.password;
  const password = () =>
    fromUrl ??
    o.env.PGPASSWORD ??
    readPgpass(o.env.PGPASSFILE ?? join(o.env.HOME ?? homedir(), '.pgpass'), c) ??
    '';
  const pool = new pg.Pool({
    host: c.host,
    port: c.port,
    database: c.database,
    user: c.user,
    password,
    ssl: c.ssl,
    max: o.max ?? 4,
    connectionTimeoutMillis: o.connectTimeoutMs ?? 5_000,
    idleTimeoutMillis: 30_000,
    application_name: 'skills-mcp',
    options: '-c synchronous_commit=on',
  });
  const lost = (err: Error) =>
    o.log?.warn({ code: (err as { code?: string }).code }, 'audit database connection lost');
  pool.on('error', lost);
  // A connection in use may break between queries too (EPIPE): the next query fails, the process must not.
  pool.on('connect', (client) => client.on('error', lost));
  return pool;
}
