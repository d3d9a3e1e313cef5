import { describe, expect, it } from 'vitest';
import { pgConnectionConfig } from '../../src/audit/postgres/pg-connection-config.js';
import { isPostgresUrl, redactPostgresUrl } from '../../src/audit/postgres/postgres-url.js';

describe('PostgreSQL URLs', () => {
  it.each([
    ['postgres://writer@db.example:5433/audit', 'postgres://writer@db.example:5433/audit'],
    ['postgres://writer:s3cret@db.example/audit', 'postgres://writer:***@db.example/audit'],
    ['postgresql://w:p@ss/w?rd@h/db?sslmode=require', 'postgresql://w:***@h/db?sslmode=require'],
    ['postgres://w@/db?host=%2Ftmp%2Fpg&password=s3cret', 'postgres://w@/db?host=%2Ftmp%2Fpg&password=***'],
    ['postgres://w:@h/db', 'postgres://w:***@h/db'],
  ])('shows %s as %s', (url, shown) => {
    expect(redactPostgresUrl(url)).toBe(shown);
  });

  it('reads host, port, database, user, password and the unix-socket form', () => {
    expect(pgConnectionConfig('postgres://w:p%40ss@db.example:5433/audit?sslmode=verify-full')).toEqual({
      host: 'db.example',
      port: 5433,
      database: 'audit',
      user: 'w',
      password: 'p@ss',
      ssl: { rejectUnauthorized: true },
    });
    expect(pgConnectionConfig('postgres://w@/audit?host=/run/postgresql')).toMatchObject({
      host: '/run/postgresql',
      port: 5432,
      ssl: false,
    });
    expect(pgConnectionConfig('postgres://[::1]:6000/audit', { user: 'me' })).toMatchObject({
      host: '::1',
      port: 6000,
      user: 'me',
    });
  });

  it.each([
    [
      'postgres://w:s3cret@h/db?sslmode=prefer',
      'sslmode "prefer" is not one of disable, require, verify-full',
    ],
    ['postgres://w:s3cret@h/db?connect_timeout=3', 'unknown parameter "connect_timeout"'],
    ['postgres://w:s3cret@/db', 'no host'],
    ['postgres://w:s3cret@h', 'name one database'],
    ['postgres://w:s3cret@h/db/x', 'name one database'],
    ['postgres://w:s3cret@h:port/db', 'the host:port part does not parse'],
  ])('refuses %s (%s), without the password in the message', (url, why) => {
    expect(() => pgConnectionConfig(url)).toThrow(why);
    try {
      pgConnectionConfig(url);
    } catch (e) {
      expect((e as Error).message).not.toContain('s3cret');
    }
  });

  it('tells a database URL from a file path', () => {
    expect(isPostgresUrl('postgres://h/db')).toBe(true);
    expect(isPostgresUrl('PostgreSQL://h/db')).toBe(true);
    expect(isPostgresUrl('./postgres://x')).toBe(false);
    expect(isPostgresUrl('/var/lib/audit.db')).toBe(false);
  });
});
