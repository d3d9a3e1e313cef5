import { describe, expect, it } from 'vitest';
import { createSignInCookie } from '../../src/console/sign-in-cookie.js';

const tokenOf = (header: string): string => /^[^=]+=([^;]+);/.exec(header)![1]!;

describe('createSignInCookie', () => {
  it('is HttpOnly, SameSite=Strict and named for its port', () => {
    const c = createSignInCookie(41234);
    expect(c.header).toMatch(/^skills-mcp-console-41234=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Strict$/);
  });

  it('knows its own cookie among others', () => {
    const c = createSignInCookie(41234);
    expect(c.signedIn(`a=b; skills-mcp-console-41234=${tokenOf(c.header)}; c=d`)).toBe(true);
  });

  it.each([
    ['no Cookie header', undefined],
    ['an empty header', ''],
    ['another token', 'skills-mcp-console-41234=AAAA'],
    ['the token under another port’s name', 'skills-mcp-console-41235=TOKEN'],
    ['the token without a name', 'TOKEN'],
  ])('refuses %s', (_name, header) => {
    const c = createSignInCookie(41234);
    expect(c.signedIn(header?.replace('TOKEN', tokenOf(c.header)))).toBe(false);
  });

  it('is new for every console', () => {
    expect(tokenOf(createSignInCookie(1).header)).not.toBe(tokenOf(createSignInCookie(1).header));
  });
});
