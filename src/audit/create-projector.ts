import type { Database } from 'better-sqlite3';
import type { AuditEvent } from './types.js';

/**
 * Updates the projections (`sessions`, `calls`, `approvals`, `artifacts`) for one event. The same function runs
 * inside every append transaction and in `rebuildProjections`, so projections are a pure fold over events.
 */
export function createProjector(db: Database): (event: AuditEvent) => void {
  const insertSession = db.prepare(
    `INSERT INTO sessions (session_id, transport, owner_pid, owner_host, started_event_id, started_ts)
     VALUES (@sessionId, @transport, @pid, @host, @eventId, @ts)`,
  );
  const abortSession = db.prepare('UPDATE sessions SET aborted = 1 WHERE session_id = ?');
  const endSession = db.prepare(
    'UPDATE sessions SET ended_event_id = @eventId, ended_ts = @ts, end_reason = @reason WHERE session_id = @sessionId',
  );
  const insertCall = db.prepare(
    `INSERT INTO calls (call_id, session_id, tool, skill, script, input_sha256, input_bytes, bundle_sha256,
       approval_key, valid, requested_event_id, requested_ts, state)
     VALUES (@callId, @sessionId, @tool, @skill, @script, @inputSha256, @inputBytes, @bundleSha256,
       @approvalKey, @valid, @eventId, @ts, 'requested')`,
  );
  const policy = db.prepare(
    'UPDATE calls SET policy_decision = @decision, policy_rule = @rule, risk_level = @level WHERE call_id = @callId',
  );
  const requestApproval = db.prepare(
    `INSERT INTO approvals (call_id, session_id, approval_key, channel, requested_event_id, requested_ts)
     VALUES (@callId, @sessionId, @approvalKey, @channel, @eventId, @ts)`,
  );
  const decideApproval = db.prepare(
    `INSERT INTO approvals (call_id, session_id, approval_key, channel, decided_event_id, decided_ts, decision, reason)
     VALUES (@callId, @sessionId, @approvalKey, @channel, @eventId, @ts, @decision, @reason)
     ON CONFLICT (call_id) DO UPDATE SET decided_event_id = excluded.decided_event_id,
       decided_ts = excluded.decided_ts, decision = excluded.decision, reason = excluded.reason`,
  );
  const callDecision = db.prepare(
    'UPDATE calls SET approval_decision = @decision, approval_reason = @reason WHERE call_id = @callId',
  );
  const startCall = db.prepare(
    "UPDATE calls SET state = 'started', started_event_id = @eventId, started_ts = @ts WHERE call_id = @callId",
  );
  const finishCall = db.prepare(
    `UPDATE calls SET state = @state, status = @status, exit_code = @exitCode, duration_ms = @durationMs,
       terminal_event_id = @eventId, terminal_ts = @ts WHERE call_id = @callId`,
  );
  const insertArtifact = db.prepare(
    'INSERT INTO artifacts (call_id, path, sha256, bytes, event_id) VALUES (?, ?, ?, ?, ?)',
  );

  return (e) => {
    const base = { eventId: e.eventId, ts: e.ts, sessionId: e.sessionId, callId: e.callId };
    switch (e.type) {
      case 'session_started':
        insertSession.run({ ...base, transport: e.payload.transport, ...e.payload.owner });
        return;
      case 'session_aborted':
        abortSession.run(e.sessionId);
        return;
      case 'session_ended':
        endSession.run({ ...base, reason: e.payload.reason });
        return;
      case 'tool_call_requested': {
        const p = e.payload;
        insertCall.run({
          ...base,
          tool: p.tool,
          skill: p.skill,
          script: p.script ?? null,
          inputSha256: p.input_sha256,
          inputBytes: p.input_bytes,
          bundleSha256: p.bundle_sha256,
          approvalKey: p.approval_key,
          valid: p.valid ? 1 : 0,
        });
        return;
      }
      case 'policy_decided':
        policy.run({
          callId: e.callId,
          decision: e.payload.decision,
          rule: e.payload.rule,
          level: e.payload.risk.level,
        });
        return;
      case 'approval_requested':
        requestApproval.run({ ...base, approvalKey: e.payload.approval_key, channel: e.payload.channel });
        return;
      case 'approval_decided': {
        const { approval_key: approvalKey, channel, decision, reason } = e.payload;
        decideApproval.run({ ...base, approvalKey, channel, decision, reason });
        callDecision.run({ callId: e.callId, decision, reason });
        return;
      }
      case 'tool_call_started':
        startCall.run(base);
        return;
      case 'tool_call_finished': {
        const p = e.payload;
        finishCall.run({
          ...base,
          state: 'finished',
          status: p.status,
          exitCode: p.exit_code,
          durationMs: p.duration_ms,
        });
        for (const a of p.artifacts) insertArtifact.run(e.callId, a.path, a.sha256, a.bytes, e.eventId);
        return;
      }
      case 'tool_call_interrupted':
        finishCall.run({
          ...base,
          state: 'interrupted',
          status: 'interrupted',
          exitCode: null,
          durationMs: null,
        });
        return;
      case 'loop_guard_tripped':
      case 'session_error':
        return;
    }
  };
}
