import { canonicalJson } from '../../../src/canonical-json.js';
import { eventHash, GENESIS_HASH } from '../../../src/audit/event-hash.js';
import type { TestAuditDb, TestPostgres } from '../../helpers/postgres.js';

/**
 * As the superuser, with the triggers off: rewrites the payload of the event at `eventId` and re-hashes the chain from
 * there, so that it links again (what someone with the database in hand could do; only the signatures can tell).
 */
export async function rewritePgEvent(
  server: TestPostgres,
  db: TestAuditDb,
  eventId: number,
  edit: (payload: Record<string, unknown>) => void,
): Promise<void> {
  await server.superuser(db.database, async (c) => {
    await c.query('BEGIN');
    await c.query('ALTER TABLE skills_mcp.audit_events DISABLE TRIGGER USER');
    const { rows } = await c.query<{
      event_id: string;
      ts: string;
      session_id: string;
      call_id: string | null;
      type: string;
      payload: string;
      prev_hash: string;
    }>(
      'SELECT event_id::text, ts::text, session_id, call_id, type, payload, prev_hash FROM skills_mcp.audit_events e WHERE e.event_id >= $1 ORDER BY e.event_id',
      [eventId],
    );
    let prev = rows[0]?.prev_hash ?? GENESIS_HASH;
    for (const r of rows) {
      const payload = JSON.parse(r.payload) as Record<string, unknown>;
      if (Number(r.event_id) === eventId) edit(payload);
      const json = canonicalJson(payload);
      const fields = { ...r, event_id: Number(r.event_id), ts: Number(r.ts), payload };
      const hash = eventHash(prev, fields, json);
      await c.query(
        'UPDATE skills_mcp.audit_events SET payload = $2, prev_hash = $3, hash = $4 WHERE event_id = $1',
        [r.event_id, json, prev, hash],
      );
      prev = hash;
    }
    await c.query('ALTER TABLE skills_mcp.audit_events ENABLE TRIGGER USER');
    await c.query('COMMIT');
  });
}
