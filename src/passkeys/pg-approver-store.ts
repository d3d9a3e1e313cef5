import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type pg from 'pg';
import { appendOrderedPgEvents, type PgAppendInput } from '../audit/postgres/append-pg-events.js';
import { PG_SCHEMA } from '../audit/postgres/pg-schema.js';
import { SkillsError } from '../errors.js';
import { approverChangeEvent, approverSessionPayload, type ApproverChange } from './approver-change-event.js';
import { ApproverCredentialSchema, type ApproverCredential } from './approvers-file.js';
import type { ApproverStore } from './approver-store.js';

const MAX_APPROVERS = 100;
const TABLE = `${PG_SCHEMA}.approvers`;
/** PostgreSQL's SQLSTATE for a table that does not exist. */
const UNDEFINED_TABLE = '42P01';

const failed = (what: string, cause: unknown) =>
  new SkillsError('AUDIT_FAILED', `could not ${what} the enrolled passkeys in the database`, { cause });

/** The change's `cli` session: started, the enrolment or removal, ended. */
function changeEvents(change: ApproverChange): PgAppendInput[] {
  const sessionId = randomUUID();
  return [
    {
      type: 'session_started',
      sessionId,
      payload: { ...approverSessionPayload(), owner: { pid: process.pid, host: hostname() } },
    },
    { ...approverChangeEvent(change), sessionId },
    { type: 'session_ended', sessionId, payload: { reason: 'client_closed', interrupted_calls: 0 } },
  ];
}

/** Appends the change's events and runs `also` (the table's change) in one transaction: both are kept or neither. */
const recorded = (
  pool: pg.Pool,
  change: ApproverChange,
  also: (client: pg.PoolClient) => Promise<unknown>,
) => {
  const events = changeEvents(change);
  return appendOrderedPgEvents(pool, { sessions: [events[0]!.sessionId], calls: [] }, () => events, also);
};

/**
 * The passkeys of every replica sharing a PostgreSQL database (`skills_mcp.approvers`): enrolled once, accepted
 * by each; removed once, refused by each. A row that does not parse fails closed (an error, not "none"); a database
 * without the table (its schema not migrated yet) has none enrolled. An enrolment or removal appends its event to the
 * log (`approver_enrolled`, `approver_removed`, as the SQLite log records them) in the transaction that changes the
 * table: the table is a projection of the log, and `audit verify` reports a row no enrolment event backs.
 */
export function pgApproverStore(pool: pg.Pool): ApproverStore {
  const store: ApproverStore = {
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
        await recorded(pool, { type: 'approver_enrolled', credential: c }, (client) =>
          client.query(`INSERT INTO ${TABLE} (credential_id, record) VALUES ($1, $2)`, [
            c.id,
            JSON.stringify(c),
          ]),
        );
      } catch (err) {
        throw failed('add to', err);
      }
    },
    async remove(id) {
      const credential = (await store.list()).find((a) => a.id === id);
      if (credential === undefined) return false;
      let gone = false;
      try {
        await recorded(pool, { type: 'approver_removed', credential, at: new Date() }, async (client) => {
          const deleted = await client.query(`DELETE FROM ${TABLE} WHERE credential_id = $1`, [id]);
          // Removed meanwhile (by another `approvers remove`): its removal is in the log already.
          if ((deleted.rowCount ?? 0) === 0) {
            gone = true;
            throw new Error('already removed');
          }
        });
        return true;
      } catch (err) {
        if (gone) return false;
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
  return store;
}
