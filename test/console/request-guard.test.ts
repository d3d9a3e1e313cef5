import { describe, expect, it } from 'vitest';
import { guardRequest, type GuardInput } from '../../src/console/request-guard.js';

const SECRET = 'c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3I';
const PORT = 41234;
const HOST = `127.0.0.1:${PORT}`;
const ORIGIN = `http://${HOST}`;

const guard = (r: Partial<GuardInput>) =>
  guardRequest({ method: 'GET', url: `/${SECRET}/`, host: HOST, ...r }, { port: PORT, secret: SECRET });

describe('guardRequest', () => {
  it.each<[string, Partial<GuardInput>, string | number]>([
    ['the console page', {}, 'ok'],
    ['localhost as the host', { host: `localhost:${PORT}` }, 'ok'],
    ['a same-origin POST', { method: 'POST', origin: ORIGIN, secFetchSite: 'same-origin' }, 'ok'],
    [
      'a cross-site top-level navigation (a link in a chat app)',
      { secFetchSite: 'cross-site', secFetchMode: 'navigate' },
      'ok',
    ],
    [
      'a direct navigation (the link opened from another program)',
      { secFetchSite: 'none', secFetchMode: 'navigate' },
      'ok',
    ],
    ['no secret', { url: '/' }, 404],
    ['a wrong secret', { url: `/${SECRET.slice(0, -1)}x/` }, 404],
    ['a secret prefix only', { url: `/${SECRET.slice(0, 10)}/` }, 404],
    ['the secret in the query instead of the path', { url: `/?s=${SECRET}` }, 404],
    ['a foreign Host (DNS rebinding)', { host: `evil.example:${PORT}` }, 403],
    ['another port in Host', { host: '127.0.0.1:80' }, 403],
    ['no Host', { host: undefined }, 403],
    ['a foreign Origin', { origin: 'http://evil.example' }, 403],
    ['Origin null', { origin: 'null' }, 403],
    ['a POST without Origin (a script, not a console page)', { method: 'POST' }, 403],
    ['a POST with a foreign Origin', { method: 'POST', origin: 'https://evil.example' }, 403],
    ['a cross-site POST', { method: 'POST', origin: ORIGIN, secFetchSite: 'cross-site' }, 403],
    [
      'a cross-site subresource (img/fetch) with the secret',
      { secFetchSite: 'cross-site', secFetchMode: 'no-cors' },
      403,
    ],
    ["an approval's secret-free link", { url: '/approve/AbC_-12' }, 'ok'],
    [
      "an approval's secret-free link opened from another site (a link, a chat app)",
      { url: '/approve/AbC_-12', secFetchSite: 'cross-site', secFetchMode: 'navigate' },
      'ok',
    ],
    [
      "an approval's secret-free link as a cross-site subresource",
      { url: '/approve/AbC_-12', secFetchSite: 'cross-site', secFetchMode: 'cors' },
      403,
    ],
    [
      "a POST to an approval's secret-free link",
      { url: '/approve/AbC_-12', method: 'POST', origin: ORIGIN },
      404,
    ],
    ['anything else under /approve/ without the secret', { url: '/approve/AbC/approvals' }, 404],
    ['an encoded slash in the id', { url: '/approve/AbC%2F..%2Fx' }, 404],
    ['a dot segment after /approve/', { url: '/approve/../approvals/AbC' }, 404],
    ['an encoded dot segment after /approve/', { url: '/approve/%2e%2e/AbC' }, 404],
    ['the secret-free link with a trailing slash', { url: '/approve/AbC/' }, 404],
    ['the secret-free link with a double slash', { url: '//approve/AbC' }, 404],
    ['the secret-free link by HEAD', { url: '/approve/AbC', method: 'HEAD' }, 'ok'],
    [
      'the secret-free link as a same-site subresource',
      { url: '/approve/AbC', secFetchSite: 'same-site', secFetchMode: 'no-cors' },
      403,
    ],
    ['the secret-free link with a foreign Host', { url: '/approve/AbC', host: `evil.example:${PORT}` }, 403],
    ['PUT', { method: 'PUT' }, 405],
    ['DELETE', { method: 'DELETE' }, 405],
  ])('%s → %s', (_name, req, expected) => {
    const r = guard(req);
    expect(r.ok ? 'ok' : r.status).toBe(expected);
  });

  it('gives the path after the secret and its query', () => {
    const r = guard({ url: `/${SECRET}/approvals/abc?decision=approved` });
    expect(r.ok && r.path).toBe('/approvals/abc');
    expect(r.ok && r.query.get('decision')).toBe('approved');
  });

  it("gives the secret-free link's path without its query (a redirect target in it leads nowhere)", () => {
    const r = guard({ url: '/approve/AbC?next=//evil.example/&location=http://evil.example/' });
    expect(r).toMatchObject({ ok: true, path: '/approve/AbC', secretless: true });
  });

  it("marks an approval's secret-free link as outside the secret, with its whole path", () => {
    const r = guard({ url: '/approve/AbC_-12' });
    expect(r).toMatchObject({ ok: true, path: '/approve/AbC_-12', secretless: true });
    expect(guard({})).not.toHaveProperty('secretless');
  });

  it('redirects the bare secret to its folder', () => {
    const r = guard({ url: `/${SECRET}` });
    expect(r).toMatchObject({ ok: false, status: 308, location: `/${SECRET}/` });
  });
});
