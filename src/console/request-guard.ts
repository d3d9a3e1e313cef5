import { timingSafeEqual } from 'node:crypto';

/** The parts of a request the guard looks at (header names lowercase, as node gives them). */
export interface GuardInput {
  method: string;
  /** The request target: path and query. */
  url: string;
  host?: string | undefined;
  origin?: string | undefined;
  secFetchSite?: string | undefined;
  secFetchMode?: string | undefined;
}

export type GuardResult =
  /** `secretless`: the one page outside the secret, `/approve/<id>` (it decides nothing and shows no call). */
  | { ok: true; path: string; query: URLSearchParams; secretless?: true }
  | { ok: false; status: 403 | 404 | 405; reason: string }
  | { ok: false; status: 308; reason: string; location: string };

const sameSecret = (a: string, b: string): boolean => {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
};

/**
 * Every console request passes here first (a pure function, table-tested):
 * 1. Host must name our loopback listener (DNS rebinding: a web page's own host name is refused).
 * 2. Only GET, HEAD and POST.
 * 3. The path must start with the per-process secret (else 404, saying nothing), except a GET or HEAD of
 *    `/approve/<id>`: the secret-free link to one approval, which leads on only a browser signed in to the console.
 * 4. An Origin, when sent, must be ours; a POST must send one (browsers always do), and its fetch metadata, when
 *    sent, must say same-origin: a decision can only come from a console page.
 * 5. A cross-site subresource request (not a navigation) is refused even with the secret.
 */
export function guardRequest(req: GuardInput, opts: { port: number; secret: string }): GuardResult {
  const { port, secret } = opts;
  const hosts = [`127.0.0.1:${port}`, `localhost:${port}`];
  if (req.host === undefined || !hosts.includes(req.host.toLowerCase())) {
    return { ok: false, status: 403, reason: 'host' };
  }
  if (req.method !== 'GET' && req.method !== 'HEAD' && req.method !== 'POST') {
    return { ok: false, status: 405, reason: 'method' };
  }
  let url: URL;
  try {
    url = new URL(req.url, `http://${hosts[0]}`);
  } catch {
    return { ok: false, status: 404, reason: 'path' };
  }
  const [, first = '', ...rest] = url.pathname.split('/');
  if (first === 'approve' && req.method !== 'POST' && /^\/approve\/[A-Za-z0-9_-]{1,64}$/.test(url.pathname)) {
    const site = req.secFetchSite;
    if ((site === 'cross-site' || site === 'same-site') && req.secFetchMode !== 'navigate')
      return { ok: false, status: 403, reason: 'fetch-site' };
    return { ok: true, path: url.pathname, query: url.searchParams, secretless: true };
  }
  if (!sameSecret(first, secret)) return { ok: false, status: 404, reason: 'secret' };
  if (req.origin !== undefined && !hosts.map((h) => `http://${h}`).includes(req.origin.toLowerCase())) {
    return { ok: false, status: 403, reason: 'origin' };
  }
  const site = req.secFetchSite;
  if (req.method === 'POST') {
    if (req.origin === undefined) return { ok: false, status: 403, reason: 'origin' };
    if (site !== undefined && site !== 'same-origin') return { ok: false, status: 403, reason: 'fetch-site' };
  } else if ((site === 'cross-site' || site === 'same-site') && req.secFetchMode !== 'navigate') {
    return { ok: false, status: 403, reason: 'fetch-site' };
  }
  if (url.pathname === `/${first}`) {
    return { ok: false, status: 308, reason: 'slash', location: `/${first}/${url.search}` };
  }
  return { ok: true, path: `/${rest.join('/')}`, query: url.searchParams };
}
