import type { SqliteDb } from './sqlite/sqlite-db.js';
import { canonicalJson } from '../canonical-json.js';
import { isSkillsError } from '../errors.js';
import { assertRunsAllowed } from './assert-runs-allowed.js';
import { checkEventInput, refused, type PendingEvent } from './check-event-input.js';
import { createProjector } from './create-projector.js';
import { chainEvent } from './chain-event.js';
import { GENESIS_HASH } from './event-hash.js';
import { checkEventOrder, type OrderLookup } from './check-event-order.js';
import type { AuditEvent } from './types.js';
import type { WriterMarker } from './writer-mark.js';

interface SessionRow {
  ended_event_id: number | null;
}
interface CallStateRow {
  session_id: string;
  state: string;
  policy_decision: string | null;
}
interface ApprovalStateRow {
  approval_key: string;
  decided_event_id: number | null;
}

/**
 * Returns `write(event)`, which validates one event (payload schema, privacy guard, session/call state),
 * chains it to the current head, inserts it and updates the projections. It must run inside an IMMEDIATE
 * transaction so that reading the head and inserting are one atomic step across processes. While
 * `runsRefused()` gives a reason (the chain or its anchors failed verification), events that would ask for an
 * approval or start a process are refused with AUDIT_CHAIN_BROKEN: no new runs, read-only records go on. With a
 * `marker` (the store holds the anchor key), each event is marked as ours in the same savepoint.
 */
export function createAppender(
  db: SqliteDb,
  now: () => number,
  runsRefused: () => string | undefined = () => undefined,
  marker?: WriterMarker,
): (event: PendingEvent) => AuditEvent {
  // Every event pruned: the chain goes on from the newest checkpoint.
  const head = db.prepare(
    `SELECT event_id, hash FROM (
       SELECT * FROM (SELECT event_id, hash FROM events ORDER BY event_id DESC LIMIT 1) UNION ALL
       SELECT * FROM (SELECT through_event, through_hash FROM checkpoints ORDER BY seq DESC LIMIT 1)
     ) ORDER BY event_id DESC LIMIT 1`,
  );
  const insert = db.prepare(
    'INSERT INTO events (event_id, ts, session_id, call_id, type, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const session = db.prepare('SELECT ended_event_id FROM sessions WHERE session_id = ?');
  const call = db.prepare('SELECT session_id, state, policy_decision FROM calls WHERE call_id = ?');
  const approval = db.prepare('SELECT approval_key, decided_event_id FROM approvals WHERE call_id = ?');
  const project = createProjector(db);

  const lookup: OrderLookup = {
    session: (id) => {
      const s = session.get(id) as SessionRow | undefined;
      return s && { ended: s.ended_event_id !== null };
    },
    call: (id) => {
      const c = call.get(id) as CallStateRow | undefined;
      return c && { sessionId: c.session_id, state: c.state, policyDecided: c.policy_decision !== null };
    },
    approval: (id) => {
      const a = approval.get(id) as ApprovalStateRow | undefined;
      return a && { approvalKey: a.approval_key, decided: a.decided_event_id !== null };
    },
  };

  return (e) => {
    assertRunsAllowed(e.type, runsRefused);
    const payload = checkEventInput(e);
    checkEventOrder(e, payload, lookup);

    const last = head.get() as { event_id: number; hash: string } | undefined;
    const eventId = (last?.event_id ?? 0) + 1;
    const prevHash = last?.hash ?? GENESIS_HASH;
    const ts = now();
    if (!Number.isSafeInteger(ts)) throw refused(e, 'the clock must return integer milliseconds');
    let payloadJson: string;
    let event: AuditEvent;
    try {
      payloadJson = canonicalJson(payload);
      event = chainEvent(e, payload, { eventId, ts, prevHash }, payloadJson);
    } catch (cause) {
      throw refused(e, isSkillsError(cause) ? cause.message : 'payload cannot be canonicalized', cause);
    }
    insert.run(eventId, ts, e.sessionId, e.callId, e.type, payloadJson, prevHash, event.hash);
    project(event);
    marker?.mark({ eventId, hash: event.hash });
    return event;
  };
}
