import type { SqliteDb } from './sqlite/sqlite-db.js';
import type { AuditEvent } from './types.js';

/**
 * Updates the projections (`sessions`, `calls`, `approvals`, `artifacts`) for one event. The same function runs
 * inside every append transaction and in `rebuildProjections`, so projections are a pure fold over events.
 */
export function createProjector(db: SqliteDb): (event: AuditEvent) => void {
  // Parameters by position: better-sqlite3 looks each named one up on the object, which more than doubled the cost
  // of the insert and the update every read-only call makes.
  const insertSession = db.prepare(
    `INSERT INTO sessions (session_id, transport, owner_pid, owner_host, started_event_id, started_ts)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const abortSession = db.prepare('UPDATE sessions SET aborted = 1 WHERE session_id = ?');
  const endSession = db.prepare(
    'UPDATE sessions SET ended_event_id = ?, ended_ts = ?, end_reason = ? WHERE session_id = ?',
  );
  const insertCall = db.prepare(
    `INSERT INTO calls (call_id, session_id, tool, skill, script, input_sha256, input_bytes, bundle_sha256,
       approval_key, valid, requested_event_id, requested_ts, state)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'requested')`,
  );
  const policy = db.prepare(
    'UPDATE calls SET policy_decision = ?, policy_rule = ?, risk_level = ? WHERE call_id = ?',
  );
  const requestApproval = db.prepare(
    `INSERT INTO approvals (call_id, session_id, approval_key, channel, requested_event_id, requested_ts)
     VALUES (?, ?, ?, ?, ?, ?)`,
  );
  const decideApproval = db.prepare(
    `INSERT INTO approvals (call_id, session_id, approval_key, channel, decided_event_id, decided_ts, decision, reason)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?)
     ON CONFLICT (call_id) DO UPDATE SET decided_event_id = excluded.decided_event_id,
       decided_ts = excluded.decided_ts, decision = excluded.decision, reason = excluded.reason`,
  );
  const callDecision = db.prepare(
    'UPDATE calls SET approval_decision = ?, approval_reason = ? WHERE call_id = ?',
  );
  const startCall = db.prepare(
    "UPDATE calls SET state = 'started', started_event_id = ?, started_ts = ? WHERE call_id = ?",
  );
  const finishCall = db.prepare(
    `UPDATE calls SET state = ?, status = ?, exit_code = ?, duration_ms = ?, terminal_event_id = ?, terminal_ts = ?
     WHERE call_id = ?`,
  );
  const insertArtifact = db.prepare(
    'INSERT INTO artifacts (call_id, path, sha256, bytes, event_id) VALUES (?, ?, ?, ?, ?)',
  );

  return (e) => {
    switch (e.type) {
      case 'session_started': {
        const { transport, owner } = e.payload;
        insertSession.run(e.sessionId, transport, owner.pid, owner.host, e.eventId, e.ts);
        return;
      }
      case 'session_aborted':
        abortSession.run(e.sessionId);
        return;
      case 'session_ended':
        endSession.run(e.eventId, e.ts, e.payload.reason, e.sessionId);
        return;
      case 'tool_call_requested': {
        const p = e.payload;
        insertCall.run(
          e.callId,
          e.sessionId,
          p.tool,
          p.skill,
          p.script ?? null,
          p.input_sha256,
          p.input_bytes,
          p.bundle_sha256,
          p.approval_key,
          p.valid ? 1 : 0,
          e.eventId,
          e.ts,
        );
        return;
      }
      case 'policy_decided':
        policy.run(e.payload.decision, e.payload.rule, e.payload.risk.level, e.callId);
        return;
      case 'approval_requested':
        requestApproval.run(
          e.callId,
          e.sessionId,
          e.payload.approval_key,
          e.payload.channel,
          e.eventId,
          e.ts,
        );
        return;
      case 'approval_decided': {
        const { approval_key: approvalKey, channel, decision, reason } = e.payload;
        decideApproval.run(e.callId, e.sessionId, approvalKey, channel, e.eventId, e.ts, decision, reason);
        callDecision.run(decision, reason, e.callId);
        return;
      }
      case 'tool_call_started':
        startCall.run(e.eventId, e.ts, e.callId);
        return;
      case 'tool_call_finished': {
        const p = e.payload;
        finishCall.run('finished', p.status, p.exit_code, p.duration_ms, e.eventId, e.ts, e.callId);
        for (const a of p.artifacts) insertArtifact.run(e.callId, a.path, a.sha256, a.bytes, e.eventId);
        return;
      }
      case 'tool_call_interrupted':
        finishCall.run('interrupted', 'interrupted', null, null, e.eventId, e.ts, e.callId);
        return;
      case 'loop_guard_tripped':
      case 'session_error':
        return;
    }
  };
}
