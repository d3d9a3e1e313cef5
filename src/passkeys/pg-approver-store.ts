import type pg from 'pg';
import { PG_SCHEMA } from '../audit/postgres/pg-schema.js';
import { SkillsError } from '../errors.js';
import { ApproverCredentialSchema, type ApproverCredential } from './approvers-file.js';
import type { ApproverStore } from './approver-store.js';

const MAX_APPROVERS = 100;
const TABLE = `${PG_SCHEMA}.approvers`;
/** PostgreSQL's SQLSTATE for a table that does not exist. */
const UNDEFINED_TABLE = '42P01';

const failed = (what: string, cause: unknown) =>
  new SkillsError('AUDIT_FAILED', `could not ${what} the enrolled passkeys in the database`, { cause });

/**
 * The passkeys of every replica sharing a PostgreSQL database (`skills_mcp.approvers`): enrolled once, accepted
 * by each; removed once, refused by each. A row that does not parse fails closed (an error, not "none"); a database
 * without the table (its schema not migrated yet) has none enrolled.
 */
export function pgApproverStore(pool: Pick<pg.Pool, 'query'>): ApproverStore {
  return {
    where: `the database table ${TABLE}`,
    async list() {
      let rows: { record: unknown }[];
      try {
        rows = (
          await pool.query<{ record: unknown }>(
            `SELECT record FROM ${TABLE} ORDER BY enrolled_at, credential_id LIMIT ${MAX_APPROVERS + 1}`,
          )
        ).rows;
      } catch (err) {
        // A schema from before the table (migration 7 not applied): nobody can have enrolled a passkey there.
        if ((err as { code?: unknown }).code === UNDEFINED_TABLE) return [];
        throw failed('read', err);
      }
      if (rows.length > MAX_APPROVERS)
        throw new SkillsError(
          'CONFIG_INVALID',
          `more than ${MAX_APPROVERS} passkeys are enrolled in ${TABLE}`,
        );
      return rows.map((r) => {
        const p = ApproverCredentialSchema.safeParse(r.record);
        if (!p.success)
          throw new SkillsError('CONFIG_INVALID', `${TABLE} holds a passkey that is not one`, {
            hint: 'Remove it with `skills-mcp approvers remove ID` and enroll again.',
          });
        return p.data;
      });
    },
    async add(c: ApproverCredential) {
      try {
        await pool.query(`INSERT INTO ${TABLE} (credential_id, record) VALUES ($1, $2)`, [
          c.id,
          JSON.stringify(c),
        ]);
      } catch (err) {
        throw failed('add to', err);
      }
    },
    async remove(id) {
      try {
        return ((await pool.query(`DELETE FROM ${TABLE} WHERE credential_id = $1`, [id])).rowCount ?? 0) > 0;
      } catch (err) {
        throw failed('remove from', err);
      }
    },
    async setCounter(id, counter) {
      try {
        await pool.query(
          `UPDATE ${TABLE} SET record = jsonb_set(record, '{counter}', to_jsonb($2::bigint)) WHERE credential_id = $1`,
          [id, counter],
        );
      } catch (err) {
        throw failed('update', err);
      }
    },
  };
}
