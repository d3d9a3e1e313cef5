import pg from 'pg';
import { SkillsError } from '../../errors.js';
import { pgFailure } from './pg-failure.js';
import {
  MIGRATION_LOCK,
  PG_MIGRATIONS,
  PG_SCHEMA,
  PG_TABLES,
  PG_VIEW_TABLES,
  PG_WORK_TABLES,
} from './pg-schema.js';

export interface PgMigrateOptions {
  /**
   * The role the server connects as: USAGE on the schema, SELECT and INSERT on the events and anchor copies, its
   * lease rows, and SELECT, INSERT and DELETE on the sealed views of waiting approvals; nothing else.
   */
  writer: string;
  /** Roles that only read the log (e.g. for `audit verify`): SELECT only, and not the sealed views. */
  readers?: readonly string[];
}

/**
 * Creates or upgrades the audit schema, as the role that is to own it (connect as that role: not the server's, and
 * preferably not a superuser). Runs the missing numbered migrations in one transaction under an advisory lock, then
 * grants: the writer may INSERT and SELECT, never UPDATE, DELETE or TRUNCATE (revoked, and refused by triggers
 * anyway). Refuses a writer that owns the schema or is a superuser: such a role could disable the triggers. Returns
 * the schema version.
 */
export async function migratePgAudit(client: pg.ClientBase, o: PgMigrateOptions): Promise<number> {
  const who = await client
    .query<{ me: string; super: boolean }>(
      'SELECT current_user AS me, coalesce((SELECT rolsuper FROM pg_roles WHERE rolname = $1), false) AS super',
      [o.writer],
    )
    .catch((err: unknown) => {
      throw pgFailure('migrate', err);
    });
  const { me, super: writerIsSuper } = who.rows[0]!;
  if (me === o.writer || writerIsSuper)
    throw new SkillsError(
      'CONFIG_INVALID',
      `audit: the server's role "${o.writer}" must not own the audit schema or be a superuser`,
      {
        hint: 'Run the migration as another role (the owner); the server connects as a role that may only INSERT and SELECT.',
      },
    );
  const id = pg.escapeIdentifier;
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query(`CREATE SCHEMA IF NOT EXISTS ${PG_SCHEMA}`);
    await client.query(`REVOKE ALL ON SCHEMA ${PG_SCHEMA} FROM PUBLIC`);
    await client.query(
      `CREATE TABLE IF NOT EXISTS ${PG_SCHEMA}.schema_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`,
    );
    const done = await client.query<{ v: number | null }>(
      `SELECT max(version) AS v FROM ${PG_SCHEMA}.schema_migrations`,
    );
    const from = done.rows[0]?.v ?? 0;
    for (let v = from + 1; v <= PG_MIGRATIONS.length; v++) {
      await client.query(PG_MIGRATIONS[v - 1]!);
      await client.query(`INSERT INTO ${PG_SCHEMA}.schema_migrations (version) VALUES ($1)`, [v]);
    }
    for (const role of [o.writer, ...(o.readers ?? [])]) {
      await client.query(`GRANT USAGE ON SCHEMA ${PG_SCHEMA} TO ${id(role)}`);
      for (const table of PG_TABLES) {
        await client.query(`REVOKE ALL ON ${PG_SCHEMA}.${table} FROM ${id(role)}`);
        await client.query(
          `GRANT ${role === o.writer ? 'SELECT, INSERT' : 'SELECT'} ON ${PG_SCHEMA}.${table} TO ${id(role)}`,
        );
      }
      for (const table of PG_WORK_TABLES) {
        await client.query(`REVOKE ALL ON ${PG_SCHEMA}.${table} FROM ${id(role)}`);
        await client.query(
          `GRANT ${role === o.writer ? 'SELECT, INSERT, UPDATE, DELETE' : 'SELECT'} ON ${PG_SCHEMA}.${table} TO ${id(role)}`,
        );
      }
      for (const table of PG_VIEW_TABLES) {
        await client.query(`REVOKE ALL ON ${PG_SCHEMA}.${table} FROM ${id(role)}`);
        if (role === o.writer)
          await client.query(`GRANT SELECT, INSERT, DELETE ON ${PG_SCHEMA}.${table} TO ${id(role)}`);
      }
    }
    await client.query('COMMIT');
    return PG_MIGRATIONS.length;
  } catch (err) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw pgFailure('migrate', err);
  }
}
