import type { Database } from 'better-sqlite3';
import { canonicalJson } from '../canonical-json.js';
import { SkillsError, isSkillsError } from '../errors.js';
import { checkEventInput, refused, type PendingEvent } from './check-event-input.js';
import { createProjector } from './create-projector.js';
import { chainEvent } from './chain-event.js';
import { GENESIS_HASH } from './event-hash.js';
import { isCallEventType } from './event-types.js';
import type { AuditEvent } from './types.js';

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

/** Events that ask a person or start a process: refused while the log cannot vouch for itself. */
const RUN_EVENTS: ReadonlySet<string> = new Set(['approval_requested', 'tool_call_started']);

/**
 * Returns `write(event)`, which validates one event (payload schema, privacy guard, session/call state),
 * chains it to the current head, inserts it and updates the projections. It must run inside an IMMEDIATE
 * transaction so that reading the head and inserting are one atomic step across processes. While
 * `runsRefused()` gives a reason (the chain or its anchors failed verification), events that would ask for an
 * approval or start a process are refused with AUDIT_CHAIN_BROKEN: no new runs, read-only records go on.
 */
export function createAppender(
  db: Database,
  now: () => number,
  runsRefused: () => string | undefined = () => undefined,
): (event: PendingEvent) => AuditEvent {
  const head = db.prepare('SELECT event_id, hash FROM events ORDER BY event_id DESC LIMIT 1');
  const insert = db.prepare(
    'INSERT INTO events (event_id, ts, session_id, call_id, type, payload, prev_hash, hash) VALUES (?, ?, ?, ?, ?, ?, ?, ?)',
  );
  const session = db.prepare('SELECT ended_event_id FROM sessions WHERE session_id = ?');
  const call = db.prepare('SELECT session_id, state, policy_decision FROM calls WHERE call_id = ?');
  const approval = db.prepare('SELECT approval_key, decided_event_id FROM approvals WHERE call_id = ?');
  const project = createProjector(db);

  function checkState(e: PendingEvent, payload: Record<string, unknown>): void {
    const s = session.get(e.sessionId) as SessionRow | undefined;
    if (e.type === 'session_started') {
      if (s) throw refused(e, 'the session already exists');
      return;
    }
    if (!s) throw refused(e, 'unknown session');
    if (s.ended_event_id !== null) throw refused(e, 'the session has ended');
    if (e.callId === null) {
      if (isCallEventType(e.type)) throw refused(e, 'a call event needs a callId');
      return;
    }
    const c = call.get(e.callId) as CallStateRow | undefined;
    if (e.type === 'tool_call_requested') {
      if (c) throw refused(e, 'the call id is already used');
      return;
    }
    if (!c) throw refused(e, 'unknown call');
    if (c.session_id !== e.sessionId) throw refused(e, 'the call belongs to another session');
    if (!isCallEventType(e.type)) return;
    if (c.state === 'finished' || c.state === 'interrupted')
      throw refused(e, 'the call already has its terminal event');
    const a = approval.get(e.callId) as ApprovalStateRow | undefined;
    switch (e.type) {
      case 'policy_decided':
        if (c.policy_decision !== null) throw refused(e, 'the policy was already decided for this call');
        return;
      case 'approval_requested':
        if (a) throw refused(e, 'approval was already asked for this call');
        return;
      case 'approval_decided':
        if (a?.decided_event_id != null) throw refused(e, 'approval was already decided for this call');
        if (a && a.approval_key !== payload.approval_key)
          throw refused(e, 'approval_key differs from the request');
        return;
      case 'tool_call_started':
        if (c.state !== 'requested') throw refused(e, 'the call was already started');
        return;
      case 'tool_call_finished':
      case 'tool_call_interrupted': {
        if (a && a.decided_event_id === null)
          throw refused(e, 'its approval is still pending: decide it first');
        const paths = (payload.artifacts as { path: string }[] | undefined)?.map((x) => x.path) ?? [];
        if (new Set(paths).size !== paths.length) throw refused(e, 'artifact paths repeat');
        return;
      }
    }
  }

  return (e) => {
    const broken = RUN_EVENTS.has(e.type) ? runsRefused() : undefined;
    if (broken !== undefined) {
      throw new SkillsError(
        'AUDIT_CHAIN_BROKEN',
        `no new runs: the audit log failed verification (${broken})`,
        {
          hint: 'An operator must run `skills-mcp audit verify` and restore the log; read-only tools still answer.',
          details: { type: e.type },
        },
      );
    }
    const payload = checkEventInput(e);
    checkState(e, payload);

    const last = head.get() as { event_id: number; hash: string } | undefined;
    const eventId = (last?.event_id ?? 0) + 1;
    const prevHash = last?.hash ?? GENESIS_HASH;
    const ts = now();
    if (!Number.isSafeInteger(ts)) throw refused(e, 'the clock must return integer milliseconds');
    let payloadJson: string;
    let event: AuditEvent;
    try {
      payloadJson = canonicalJson(payload);
      event = chainEvent(e, payload, { eventId, ts, prevHash });
    } catch (cause) {
      throw refused(e, isSkillsError(cause) ? cause.message : 'payload cannot be canonicalized', cause);
    }
    insert.run(eventId, ts, e.sessionId, e.callId, e.type, payloadJson, prevHash, event.hash);
    project(event);
    return event;
  };
}
