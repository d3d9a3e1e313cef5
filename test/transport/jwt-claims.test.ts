import { describe, expect, it } from 'vitest';
import { claimAt, groupsOf } from '../../src/transport/http/jwt-auth.js';

describe('claims read from a verified access token', () => {
  it('finds a dotted claim name as the token key first, then as a path through nested objects', () => {
    expect(
      claimAt({ 'realm_access.roles': ['a'], realm_access: { roles: ['b'] } }, 'realm_access.roles'),
    ).toEqual(['a']);
    expect(claimAt({ realm_access: { roles: ['b'] } }, 'realm_access.roles')).toEqual(['b']);
    expect(claimAt({ realm_access: [{ roles: ['b'] }] }, 'realm_access.0.roles')).toBeUndefined();
    expect(claimAt({ 'https://example.com/groups': ['c'] }, 'https://example.com/groups')).toEqual(['c']);
    expect(claimAt({ a: { b: null } }, 'a.b.c')).toBeUndefined();
    expect(claimAt({}, 'constructor')).toBeUndefined();
  });

  it.each<[string, Record<string, unknown>, string[] | 'unknown']>([
    ['a list of strings', { groups: ['ops', 'dev'] }, ['ops', 'dev']],
    ['one string', { groups: 'ops' }, ['ops']],
    ['no such claim', {}, []],
    ['a nested claim (Keycloak roles)', { realm_access: { roles: ['contractors'] } }, ['contractors']],
    ['an object', { groups: { ops: true } }, 'unknown'],
    ['a number', { groups: 7 }, 'unknown'],
    ['a list holding a non-string', { groups: ['ops', { admin: true }] }, 'unknown'],
    ['left out as too long (Entra ID overage)', { _claim_names: { groups: 'src1' } }, 'unknown'],
  ])('reads the groups of %s', (_what, payload, groups) => {
    const claim = 'realm_access' in payload ? 'realm_access.roles' : 'groups';
    expect(groupsOf(payload, claim)).toEqual(groups);
  });
});
