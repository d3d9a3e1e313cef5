import { describe, expect, it } from 'vitest';
import { createStaticTokenAuth, principalOf } from '../../src/transport/http/bearer-auth.js';
import { httpSession } from '../../src/transport/http/http-session.js';
import { isLoopbackHost } from '../../src/transport/http/is-loopback-host.js';
import { hostnameOf } from '../../src/transport/http/request-guard.js';

describe('isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true],
    ['127.1.2.3', true],
    ['localhost', true],
    ['::1', true],
    ['[::1]', true],
    ['::ffff:127.0.0.1', true],
    ['0.0.0.0', false],
    ['::', false],
    ['192.168.1.10', false],
    ['128.0.0.1', false],
    ['localhost.example.com', false],
    ['example.com', false],
  ])('%s → %s', (host, expected) => {
    expect(isLoopbackHost(host)).toBe(expected);
  });
});

describe('hostnameOf', () => {
  it.each([
    ['mcp.example.com', 'mcp.example.com'],
    ['mcp.example.com:8443', 'mcp.example.com'],
    ['https://app.example.com', 'app.example.com'],
    ['http://localhost:5173', 'localhost'],
    ['[::1]:3333', '[::1]'],
    ['::1', '[::1]'],
    ['moz-extension://*', 'moz-extension://*'],
    ['not a host', undefined],
  ])('%s → %s', (value, expected) => {
    expect(hostnameOf(value)).toBe(expected);
  });
});

describe('bearer check', () => {
  const token = 'a-very-secret-token-0123456789';
  const check = createStaticTokenAuth(token);

  it('accepts the token, names the principal by a sha256 prefix and grants every scope', async () => {
    expect(await check(`Bearer ${token}`)).toMatchObject({
      ok: true,
      auth: { principal: principalOf(token), info: { token: '', scopes: ['skills:read', 'skills:run'] } },
    });
    expect(await check(`bearer ${token}`)).toMatchObject({ ok: true });
    expect(principalOf(token)).toMatch(/^[0-9a-f]{16}$/);
  });

  it('tells a missing token from a wrong one', async () => {
    const missing = {
      ok: false,
      refusal: { status: 401, headers: { 'www-authenticate': 'Bearer realm="skills-mcp"' } },
    };
    const wrong = {
      ok: false,
      refusal: {
        status: 401,
        headers: {
          'www-authenticate': expect.stringMatching(
            /^Bearer realm="skills-mcp", error="invalid_token", error_description="[^"]+"$/,
          ) as string,
        },
        reason: 'wrong token',
      },
    };
    expect(await check(undefined)).toMatchObject(missing);
    expect(await check('Basic abc')).toMatchObject(missing);
    expect(await check(`Bearer ${token}x`)).toMatchObject(wrong);
    expect(await check('Bearer x')).toMatchObject(wrong);
  });
});

describe('httpSession', () => {
  it('maps legacy sessions, principals and anonymous modern requests', () => {
    expect(httpSession(undefined, 'abc')).toEqual({ id: 'abc', transport: 'http' });
    expect(httpSession('0123456789abcdef', 'abc')).toEqual({
      id: 'abc',
      transport: 'http',
      principal: '0123456789abcdef',
    });
    expect(httpSession('0123456789abcdef')).toEqual({
      id: 'http-0123456789abcdef',
      transport: 'http',
      principal: '0123456789abcdef',
      shared: true,
    });
    expect(httpSession(undefined)).toEqual({ id: 'http-anonymous', transport: 'http', shared: true });
  });
});
