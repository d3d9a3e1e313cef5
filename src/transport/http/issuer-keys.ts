import { createRemoteJWKSet, customFetch, errors, type JWTVerifyGetKey } from 'jose';

export interface IssuerKeysOptions {
  /** Longest a fetched key set is used (ms); the key set's own Cache-Control max-age may shorten it. */
  maxAgeMs: number;
  /** Shortest time between two fetches (ms): the most an unknown key id makes the issuer serve. */
  minRefetchMs: number;
  /** How long one fetch may take (ms). */
  timeoutMs: number;
  /** Fetches from the issuer (bounded, with its own back-off after a failure). */
  fetch: (url: string, init: RequestInit) => Promise<Response>;
  /** Monotonic milliseconds (injectable for tests). */
  now?: () => number;
}

/** The key set's lifetime from its `Cache-Control`, within [minRefetchMs, maxAgeMs]; absent: maxAgeMs. */
export function keySetMaxAge(cacheControl: string | null, o: IssuerKeysOptions): number {
  const cc = (cacheControl ?? '').toLowerCase();
  const maxAge = /(?:^|[\s,])max-age\s*=\s*"?(\d{1,10})"?/.exec(cc)?.[1];
  const seconds = /(?:^|[\s,])(?:no-store|no-cache)(?:$|[\s,=])/.test(cc)
    ? 0
    : maxAge === undefined
      ? Infinity
      : Number(maxAge);
  return Math.min(o.maxAgeMs, Math.max(o.minRefetchMs, seconds * 1000));
}

/**
 * The issuer's signing keys for `jwtVerify`: jose's remote key set, with two bounds it lacks on its own.
 *
 * - A key id not in the set refetches it without a blind spot: at once when the last fetch is older than
 *   `minRefetchMs`, else after waiting out the rest of that interval (jose alone refuses such tokens for its whole
 *   cooldown). Waiting requests share one fetch, so unknown key ids cost the issuer at most one fetch an interval.
 * - A fetched set is used at most `maxAgeMs`, or its `Cache-Control` max-age when that is shorter (never below
 *   `minRefetchMs`): a key the issuer removed stops verifying within that bound. When the set is that old and
 *   cannot be fetched, the lookup fails (the caller answers 503), rather than trusting keys it cannot confirm.
 * - A fetch that failed (an error status, no answer) is not tried again for `minRefetchMs` either.
 */
export function createIssuerKeys(url: URL, o: IssuerKeysOptions): JWTVerifyGetKey {
  const now = o.now ?? (() => performance.now());
  let fetches = 0;
  let fetchedAt = -Infinity;
  let failedAt = -Infinity;
  let maxAge = o.maxAgeMs;
  const remote = createRemoteJWKSet(url, {
    timeoutDuration: o.timeoutMs,
    cooldownDuration: o.minRefetchMs,
    cacheMaxAge: o.maxAgeMs,
    // jose cools down only after a fetch that worked: after one that failed (an error status, no answer) every lookup
    // would fetch again, so a stream of tokens with unknown key ids would be a stream of fetches. Not here: no fetch
    // for `minRefetchMs` after a failed one; the lookup fails meanwhile (the caller answers 503).
    [customFetch]: async (href: string, init: RequestInit) => {
      if (now() - failedAt < o.minRefetchMs)
        throw new Error('the issuer key set could not be fetched a moment ago: not asked again yet');
      fetches++;
      let res: Response;
      try {
        res = await o.fetch(href, init);
      } catch (err) {
        failedAt = now();
        throw err;
      }
      if (res.status === 200) {
        fetchedAt = now();
        maxAge = keySetMaxAge(res.headers.get('cache-control'), o);
      } else failedAt = now();
      return res;
    },
  });

  let refetch: Promise<void> | undefined;
  const refetchSoon = () =>
    (refetch ??= (async () => {
      const wait = fetchedAt + o.minRefetchMs - now();
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait).unref());
      await remote.reload();
    })().finally(() => {
      refetch = undefined;
    }));

  return async (header, token) => {
    const before = fetches;
    if (now() - fetchedAt >= maxAge) await remote.reload();
    try {
      return await remote(header, token);
    } catch (err) {
      if (!(err instanceof errors.JWKSNoMatchingKey)) throw err;
      // Nobody fetched since this token came: fetch (no sooner than the interval allows). Someone is fetching:
      // wait for that. Either way, look the key up once more in a set fetched after the token came.
      if (fetches === before) await refetchSoon();
      else if (remote.reloading) await remote.reload();
      return remote(header, token);
    }
  };
}
