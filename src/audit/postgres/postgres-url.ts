/** Whether `--audit` / `audit:` names a PostgreSQL database (`postgres://…` or `postgresql://…`) rather than a file. */
export const isPostgresUrl = (target: string): boolean => /^postgres(?:ql)?:\/\//i.test(target);

/** The parts of `postgres://[user[:password]@][host[:port]][/database][?query]`, still percent-encoded. */
export interface PostgresUrlParts {
  user: string;
  password: string | undefined;
  /** `host`, `host:port` or `[v6]:port`; empty for a unix socket named in `?host=`. */
  hostPort: string;
  path: string;
  query: string;
}

const URL_SHAPE = /^postgres(?:ql)?:\/\/(?:([^:@/?]*)(?::([^@/?]*))?@)?([^/?]*)(\/[^?]*)?(?:\?(.*))?$/i;

/** Splits a PostgreSQL URL (libpq's form: unlike WHATWG URLs, the host may be empty). Undefined when it is not one. */
export function splitPostgresUrl(url: string): PostgresUrlParts | undefined {
  const m = URL_SHAPE.exec(url);
  if (m === null) return undefined;
  return { user: m[1] ?? '', password: m[2], hostPort: m[3] ?? '', path: m[4] ?? '', query: m[5] ?? '' };
}

/**
 * The URL as it may be shown: a password in the user part, or in a query parameter named like one, becomes `***`.
 * Text that is not a PostgreSQL URL is shown as `postgres://***` rather than risk printing what it holds.
 */
export function redactPostgresUrl(url: string): string {
  const p = splitPostgresUrl(url);
  if (p === undefined) return 'postgres://***';
  const scheme = url.slice(0, url.indexOf('://'));
  const user =
    p.user === '' && p.password === undefined ? '' : `${p.user}${p.password === undefined ? '' : ':***'}@`;
  const query = p.query
    .split('&')
    .filter((kv) => kv !== '')
    .map((kv) => (/pass/i.test(kv.split('=')[0] ?? '') ? `${kv.split('=')[0]}=***` : kv))
    .join('&');
  return `${scheme}://${user}${p.hostPort}${p.path}${query === '' ? '' : `?${query}`}`;
}
