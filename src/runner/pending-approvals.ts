import type { CallResult } from './call-result.js';
import { PendingApprovals as Budgeted, type PendingLimits } from './pending-budget.js';
import type { LiveSession } from './live-sessions.js';
import type { PreparedCall } from './prepare-call.js';
import type { CallContext } from './runner-types.js';

/** A call waiting for a person's answer. */
export interface Pending {
  call: PreparedCall;
  session: LiveSession;
  timer: NodeJS.Timeout;
  /** When the form was put to the client (`RunnerDeps.now`): how fast an answer came tells who gave it. */
  askedAt: number;
  /** Set when an approval was recorded out of band (console) and the call waits for the client's retry. */
  approved?: true;
  /** Set while a console answer is being recorded: nothing else may decide or run the call meanwhile. */
  recording?: true;
  channel: CallContext['channel'];
}

export type ClosedListener = (callId: string, result: CallResult | undefined) => void;

/** The calls waiting for an answer, and who hears when one ends without `resume`/`recordAnswer`. */
export interface PendingApprovals {
  get(callId: string): Pending | undefined;
  /** Takes room for one more waiting call within the budgets, or returns why there is none (ask nothing then). */
  reserve(callId: string, sessionId: string, bytes: number): string | undefined;
  /** Gives back room reserved for a call that was never added. */
  release(callId: string): void;
  add(callId: string, p: Pending): void;
  /** Takes the call out (and stops its timer): whoever took it decides it, once. */
  take(callId: string): Pending | undefined;
  /** The calls of one session waiting now (or holding a kept approval). */
  ofSession(sessionId: string): [string, Pending][];
  /** Takes out every call of `sessionId` (every call when undefined), telling the listeners. */
  closeAll(sessionId?: string): void;
  notifyClosed: ClosedListener;
  onClosed: (listener: ClosedListener) => () => void;
}

/** `onTaken` hears of every call taken out, whoever took it. */
export function createPendingApprovals(
  limits: PendingLimits,
  onTaken: (callId: string) => void = () => undefined,
): PendingApprovals {
  const pending = new Budgeted<Pending>(limits);
  const listeners = new Set<ClosedListener>();
  const notifyClosed: ClosedListener = (callId, result) => {
    for (const l of listeners) l(callId, result);
  };
  const take = (callId: string) => {
    const p = pending.get(callId);
    if (p === undefined) return undefined;
    pending.delete(callId);
    clearTimeout(p.timer);
    onTaken(callId);
    return p;
  };
  const closeAll = (sessionId?: string) => {
    for (const [id, p] of pending) {
      if (sessionId !== undefined && p.session.info.id !== sessionId) continue;
      take(id);
      notifyClosed(id, undefined);
    }
  };
  return {
    get: (callId) => pending.get(callId),
    ofSession: (sessionId) => [...pending].filter(([, p]) => p.session.info.id === sessionId),
    reserve: (callId, sessionId, bytes) => pending.reserve(callId, sessionId, bytes),
    release: (callId) => void pending.delete(callId),
    add: (callId, p) => void pending.set(callId, p),
    take,
    closeAll,
    notifyClosed,
    onClosed: (listener) => {
      listeners.add(listener);
      return () => void listeners.delete(listener);
    },
  };
}
