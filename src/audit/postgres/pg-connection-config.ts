import { SkillsError } from '../../errors.js';
import { redactPostgresUrl, splitPostgresUrl } from './postgres-url.js';

/** Where and as whom to connect, from a `postgres://` URL. */
export interface PgConnectionConfig {
  host: string;
  port: number;
  database: string;
  user: string;
  /** Only when the URL holds one (discouraged: it then shows in argv and config files). */
  password?: string;
  /** TLS: off, on without checking the certificate (`sslmode=require`), or on and checked (`verify-full`). */
  ssl: false | { rejectUnauthorized: boolean };
}

const SSL: Record<string, PgConnectionConfig['ssl']> = {
  disable: false,
  require: { rejectUnauthorized: false },
  'verify-full': { rejectUnauthorized: true },
};

/**
 * Reads `postgres://user[:password]@host[:port]/database[?host=/socket/dir][&sslmode=…]`. An empty host with
 * `?host=/dir` connects through the unix socket in that folder. Anything else in the query is refused rather than
 * ignored (a misspelt `sslmode` must not quietly mean no TLS). Errors never quote the password.
 */
export function pgConnectionConfig(url: string, defaults: { user?: string } = {}): PgConnectionConfig {
  const bad = (why: string) =>
    new SkillsError('CONFIG_INVALID', `audit: ${redactPostgresUrl(url)}: ${why}`, {
      hint: 'Write it as postgres://USER@HOST:PORT/DATABASE or postgres://USER@/DATABASE?host=/socket/folder; give the password in PGPASSWORD or a password file (PGPASSFILE), not in the URL.',
    });
  const u = splitPostgresUrl(url);
  if (u === undefined) throw bad('not a postgres:// URL');
  const decode = (v: string) => {
    try {
      return decodeURIComponent(v);
    } catch {
      throw bad('bad percent-encoding');
    }
  };
  const params = new URLSearchParams(u.query);
  for (const key of params.keys())
    if (key !== 'host' && key !== 'sslmode') throw bad(`unknown parameter "${key}"`);
  const hp = /^(\[[^\]]*\]|[^:]*)(?::(\d+))?$/.exec(u.hostPort);
  if (hp === null) throw bad('the host:port part does not parse');
  const host = params.get('host') ?? decode(hp[1]!.replace(/^\[|\]$/g, ''));
  if (host === '') throw bad('no host (for a unix socket, add ?host=/its/folder)');
  const database = decode(u.path.replace(/^\//, ''));
  const user = decode(u.user) || defaults.user || '';
  if (database === '' || database.includes('/')) throw bad('name one database after the host');
  if (user === '') throw bad('name the user (postgres://USER@…)');
  const port = hp[2] === undefined ? 5432 : Number(hp[2]);
  const sslmode = params.get('sslmode') ?? 'disable';
  const ssl = SSL[sslmode];
  if (ssl === undefined) throw bad(`sslmode "${sslmode}" is not one of ${Object.keys(SSL).join(', ')}`);
  const password = u.password === undefined ? '' : decode(u.password);
  return { host, port, database, user, ssl, ...(password === '' ? {} : { password }) };
}
