import {
  countsAsDenial,
  isApprovalDecision,
  isDecisionReason,
  type ApprovalOutcome,
} from './approval-decision.js';
import { byCodeUnit } from '../gate/approval-key.js';

/** The audit events this state is made of, as written and as read back. */
export type SessionEvent =
  | { type: 'approval_decided'; payload: { approval_key: string } & ApprovalOutcome }
  | { type: 'loop_guard_tripped'; payload: { approval_key: string } }
  | { type: 'session_aborted'; payload: Record<string, never> };

/** Any audit event of the session; types other than the three above are ignored. */
export interface AuditEventLike {
  type: string;
  payload: unknown;
}

/** What happens to a call that needs approval, before anyone is asked. */
export type SessionCheck = 'ask' | 'cached' | 'loop_guard' | 'session_aborted';

/** Plain data, equal for a live state and one rebuilt from its events. */
export interface SessionSnapshot {
  aborted: boolean;
  grants: string[];
  denials: Record<string, number>;
  loopGuarded: string[];
}

export interface SessionState {
  /** Aborted ⇒ `session_aborted`; a grant ⇒ `cached`; loop guard tripped ⇒ `loop_guard`; else `ask`. */
  check(approvalKey: string): SessionCheck;
  isAborted(): boolean;
  hasGrant(approvalKey: string): boolean;
  denialCount(approvalKey: string): number;
  isLoopGuarded(approvalKey: string): boolean;
  /**
   * The events recording a decision, in order, without changing the state: `approval_decided`, then
   * `loop_guard_tripped` when this denial trips the guard, or `session_aborted` on the first abort.
   * Write them to the audit, then `apply` each (write-ahead). `record` does both steps in memory.
   */
  eventsFor(approvalKey: string, outcome: ApprovalOutcome): SessionEvent[];
  apply(event: AuditEventLike): void;
  record(approvalKey: string, outcome: ApprovalOutcome): SessionEvent[];
  snapshot(): SessionSnapshot;
}

export interface SessionStateOptions {
  /** The Nth counted denial of a key trips the loop guard (config `loop_guard`); 0 turns it off. */
  loopGuard: number;
}

/** Per-session grants, denial counts, loop guard and abort; rebuilt from the session's audit events. */
export function createSessionState(
  options: SessionStateOptions,
  events: Iterable<AuditEventLike> = [],
): SessionState {
  let aborted = false;
  const grants = new Set<string>();
  const denials = new Map<string, number>();
  const tripped = new Set<string>();
  const count = (key: string): number => denials.get(key) ?? 0;
  const guarded = (key: string): boolean =>
    options.loopGuard > 0 && (tripped.has(key) || count(key) >= options.loopGuard);

  const state: SessionState = {
    check: (key) =>
      aborted ? 'session_aborted' : grants.has(key) ? 'cached' : guarded(key) ? 'loop_guard' : 'ask',
    isAborted: () => aborted,
    hasGrant: (key) => grants.has(key),
    denialCount: count,
    isLoopGuarded: guarded,
    eventsFor(key, outcome) {
      const out: SessionEvent[] = [{ type: 'approval_decided', payload: { approval_key: key, ...outcome } }];
      const trips = options.loopGuard > 0 && !guarded(key) && countsAsDenial(outcome);
      if (trips && count(key) + 1 >= options.loopGuard) {
        out.push({ type: 'loop_guard_tripped', payload: { approval_key: key } });
      }
      if (outcome.decision === 'abort' && !aborted) out.push({ type: 'session_aborted', payload: {} });
      return out;
    },
    apply(event) {
      const p = (typeof event.payload === 'object' && event.payload !== null ? event.payload : {}) as Record<
        string,
        unknown
      >;
      const key = typeof p.approval_key === 'string' ? p.approval_key : undefined;
      if (event.type === 'session_aborted') aborted = true;
      else if (event.type === 'loop_guard_tripped' && key !== undefined) tripped.add(key);
      else if (event.type === 'approval_decided' && key !== undefined) {
        if (!isApprovalDecision(p.decision) || !isDecisionReason(p.reason)) return;
        const outcome = { decision: p.decision, reason: p.reason };
        if (outcome.decision === 'approved_for_session') grants.add(key);
        if (outcome.decision === 'abort') aborted = true;
        if (countsAsDenial(outcome)) denials.set(key, count(key) + 1);
      }
    },
    record(key, outcome) {
      const out = state.eventsFor(key, outcome);
      out.forEach((e) => state.apply(e));
      return out;
    },
    snapshot() {
      const keys = [...denials.keys(), ...tripped].sort(byCodeUnit);
      return {
        aborted,
        grants: [...grants].sort(byCodeUnit),
        denials: Object.fromEntries([...denials].sort(([a], [b]) => byCodeUnit(a, b))),
        loopGuarded: [...new Set(keys)].filter(guarded),
      };
    },
  };
  for (const event of events) state.apply(event);
  return state;
}
