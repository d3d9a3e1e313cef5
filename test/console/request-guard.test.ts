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

  it('redirects the bare secret to its folder', () => {
    const r = guard({ url: `/${SECRET}` });
    expect(r).toMatchObject({ ok: false, status: 308, location: `/${SECRET}/` });
  });
});
