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

/**
 * Splits a PostgreSQL URL (libpq's form: unlike WHATWG URLs, the host may be empty). Undefined when it is not one.
 * The user part ends at the last `@`, so a password holding an unescaped `@`, `/` or `?` is still taken whole (and
 * never shown as the host).
 */
export function splitPostgresUrl(url: string): PostgresUrlParts | undefined {
  const m = /^postgres(?:ql)?:\/\//i.exec(url);
  if (m === null) return undefined;
  let rest = url.slice(m[0].length);
  const at = rest.lastIndexOf('@');
  const userinfo = at === -1 ? undefined : rest.slice(0, at);
  rest = rest.slice(at + 1);
  const q = rest.indexOf('?');
  const query = q === -1 ? '' : rest.slice(q + 1);
  const hostPath = q === -1 ? rest : rest.slice(0, q);
  const slash = hostPath.indexOf('/');
  const colon = userinfo?.indexOf(':') ?? -1;
  return {
    user: userinfo === undefined ? '' : colon === -1 ? userinfo : userinfo.slice(0, colon),
    password: userinfo === undefined || colon === -1 ? undefined : userinfo.slice(colon + 1),
    hostPort: slash === -1 ? hostPath : hostPath.slice(0, slash),
    path: slash === -1 ? '' : hostPath.slice(slash),
    query,
  };
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
