import { randomUUID } from 'node:crypto';
import type { CallerRecord } from '../audit/caller-record-schema.js';
import { principalDigest } from '../audit/principal-digest.js';
import { createSessionState, type SessionState } from '../approvals/session-state.js';
import { callerRecord, withCaller } from './caller-record.js';
import type { RunnerDeps } from './runner-types.js';
import type { SessionInfo } from './session.js';

/** A session the runner has seen: its identity and its gate state (grants, denials, aborts, loop guard). */
export interface LiveSession {
  info: SessionInfo;
  /**
   * The id its events are recorded under: `info.id`, unless the audit log already holds a session of that id (a
   * modern-era HTTP principal, whose id is stable, after a restart or on another replica): then a new audit
   * session, `<id>.<random>`, continues it.
   */
  auditId: string;
  gate: SessionState;
  /** The signed-in caller as the audit log records it (on the session, each call, and answers in the client). */
  caller?: CallerRecord;
}

export interface LiveSessions {
  /** The session's audit record and gate state, started on its first call (gate state rebuilt from the log). */
  get(info: SessionInfo): Promise<LiveSession>;
  /** Forgets the session; returns it when it had been started. */
  forget(sessionId: string): Promise<LiveSession> | undefined;
}

export function createLiveSessions(deps: Pick<RunnerDeps, 'audit' | 'config' | 'version'>): LiveSessions {
  const sessions = new Map<string, Promise<LiveSession>>();
  const get = (info: SessionInfo): Promise<LiveSession> => {
    let s = sessions.get(info.id);
    if (s === undefined) {
      const caller = callerRecord(info.caller, deps.config);
      s = deps.audit().then(async (audit) => {
        // A session id the log already holds (ended, or open in another server process sharing the log: a replica
        // serving the same principal) is continued under a new audit session: each process ends only its own. In a
        // log shared by replicas, an id every replica serves always is: two replicas whose first calls come at once
        // would both find it free and both start it.
        const ownId = info.shared === true && audit.replicas !== undefined;
        const taken = ownId || (await audit.sessionState(info.id)).exists;
        const auditId = taken ? `${info.id}.${randomUUID()}` : info.id;
        const principal =
          info.principal === undefined ? {} : { principal_sha256: principalDigest(info.principal) };
        // Sessions that start together (clients connecting at once) share one commit.
        await audit.startSessionAsync(
          { transport: info.transport, server_version: deps.version, ...principal, ...withCaller(caller) },
          { sessionId: auditId },
        );
        // A stop recorded before a restart still holds for the same principal; grants do not carry over. The
        // session just started holds nothing of its own yet: whatever the log has under its id from before it
        // started (a database writer's rows) gives it no grant.
        const past = auditId === info.id ? [] : await audit.sessionEvents(info.id, ['session_aborted']);
        return {
          info,
          auditId,
          gate: createSessionState({ loopGuard: deps.config.approval.loop_guard }, past),
          ...withCaller(caller),
        };
      });
      sessions.set(info.id, s);
      s.catch(() => sessions.delete(info.id));
    }
    return s;
  };
  const forget = (sessionId: string) => {
    const s = sessions.get(sessionId);
    sessions.delete(sessionId);
    return s;
  };
  return { get, forget };
}
