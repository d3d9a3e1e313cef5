import { describe, expect, it } from 'vitest';
import { createSignInCookie } from '../../src/console/sign-in-cookie.js';

const tokenOf = (header: string): string => /^[^=]+=([^;]+);/.exec(header)![1]!;

describe('createSignInCookie', () => {
  it('is HttpOnly, SameSite=Strict, named for its port and sent only to the approval links', () => {
    const c = createSignInCookie();
    expect(c.header(41234)).toMatch(
      /^skills-mcp-console-41234=[A-Za-z0-9_-]{43}; Path=\/approve; HttpOnly; SameSite=Strict$/,
    );
  });

  it('knows its own cookie among others', () => {
    const c = createSignInCookie();
    expect(c.signedIn(`a=b; skills-mcp-console-41234=${tokenOf(c.header(41234))}; c=d`, 41234)).toBe(true);
  });

  it.each([
    ['no Cookie header', undefined],
    ['an empty header', ''],
    ['another token', 'skills-mcp-console-41234=AAAA'],
    ['the token under another port’s name', 'skills-mcp-console-41235=TOKEN'],
    ['the token without a name', 'TOKEN'],
  ])('refuses %s', (_name, header) => {
    const c = createSignInCookie();
    expect(c.signedIn(header?.replace('TOKEN', tokenOf(c.header(41234))), 41234)).toBe(false);
  });

  it('is new for every console', () => {
    expect(tokenOf(createSignInCookie().header(1))).not.toBe(tokenOf(createSignInCookie().header(1)));
  });
});
