import { randomBytes, timingSafeEqual } from 'node:crypto';
import { isSkillsError } from '../errors.js';
import type { ApprovalDecision } from '../approvals/approval-decision.js';
import type { ApprovalView } from '../approvals/approval-view.js';
import type { ApprovalAnswer } from '../approvals/approval-request.js';
import type { CardDisplay } from '../approvals/card-display.js';
import type { Logger } from '../log.js';
import type { PasskeyEvidence } from '../approvals/passkey-evidence.js';
import type { CallResult } from '../runner/call-result.js';
import type { Runner } from '../runner/runner-types.js';
import type { SessionInfo } from '../runner/session.js';

/**
 * pending: waiting for the person. recording: decided while no request waited, being written. kept: approved
 * while no request waited; the retry runs it. running: a request is running or refusing it. done: closed.
 */
export type ApprovalState = 'pending' | 'recording' | 'kept' | 'running' | 'done';

/** One approval shown in the console. `id` and `csrf` are random and never equal to the call id. */
export interface ConsoleApproval {
  readonly id: string;
  /** A decision POST must carry it: bound to this approval only. */
  readonly csrf: string;
  readonly callId: string;
  readonly session: SessionInfo;
  /** See `requestKey`: a retry of the same request continues this approval. */
  readonly requestKey: string;
  readonly view: ApprovalView;
  readonly askedAt: number;
  /** Set when the call waits on another server process (its console shared it): which one, for the page. */
  readonly elsewhere?: string;
  /**
   * Set for a call waiting on another server process: what its card shows, as that process's console shows it.
   * `view` then holds neither the arguments nor the input (the call's page fetches them when it is shown), and only
   * the first input keys and risk findings.
   */
  readonly display?: CardDisplay;
  state: ApprovalState;
  decision?: ApprovalDecision;
  /** Set when the decision was made in the console of another server process sharing the audit log. */
  decidedElsewhere?: true;
  decidedAt?: number;
  /** What became of it, in words, for the page. */
  outcome?: string;
  /** A refusal recorded while no request waited: handed to the retry once. */
  result?: CallResult;
  /** Settles when a decision made while no request waited has been recorded. */
  recorded?: Promise<void>;
}

/** Why a waiting request woke up. */
export type Wake =
  | { kind: 'answer'; answer: ApprovalAnswer }
  | { kind: 'closed'; result: CallResult | undefined }
  | { kind: 'released' }
  | { kind: 'aborted' };

/** What a retry of a known request does. */
export type Claim =
  | { kind: 'run'; answer: ApprovalAnswer }
  | { kind: 'result'; result: CallResult }
  | { kind: 'wait' }
  | { kind: 'none' };

export type DecideResult = 'decided' | 'unknown' | 'bad_token' | 'not_pending';

/** A decision from the page (POST): its approval, the form's token, the decision and any passkey evidence. */
export type DecideApproval = (
  id: string,
  csrf: string,
  decision: ApprovalDecision,
  passkey?: PasskeyEvidence,
) => Promise<DecideResult>;

export interface ApprovalQueue {
  add(input: {
    callId: string;
    session: SessionInfo;
    requestKey: string;
    view: ApprovalView;
  }): ConsoleApproval;
  /** The open approval a retry of `requestKey` continues, if any. */
  retryOf(requestKey: string): ConsoleApproval | undefined;
  /** Takes over a retried approval: run it (approved), hand out its refusal, wait for the person, or ask anew. */
  claim(a: ConsoleApproval): Promise<Claim>;
  /** Holds a request until the person decides, the runner closes the call, `holdMs` passes or `signal` aborts. */
  wait(a: ConsoleApproval, opts: { holdMs: number; signal?: AbortSignal }): Promise<Wake>;
  /** A decision from the page (POST). */
  decide: DecideApproval;
  /**
   * Takes a pending approval no request waits on off the page (the client withdrew it): true when it was still
   * pending, after which no decision from the page applies to it.
   */
  take(a: ConsoleApproval): boolean;
  /** Records what became of an approval a request resumed (`note` overrides the words for the page). */
  finish(a: ConsoleApproval, result: CallResult, note?: string): void;
  get(id: string): ConsoleApproval | undefined;
  /** Every approval known, newest first (closed ones are kept for a while for the page). */
  list(): ConsoleApproval[];
  close(): void;
}

const KEEP_CLOSED = 50;

const accept = (decision: ApprovalDecision, passkey?: PasskeyEvidence): ApprovalAnswer => ({
  action: 'accept',
  content: { decision },
  ...(passkey === undefined ? {} : { passkey }),
});

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** Pending console approvals and the requests waiting on them. Per process; scoped to the runner given. */
export function createApprovalQueue(deps: {
  runner: Runner;
  log: Logger;
  now?: () => number;
}): ApprovalQueue {
  const { runner, log } = deps;
  const now = deps.now ?? Date.now;
  const byId = new Map<string, ConsoleApproval>();
  const byCall = new Map<string, ConsoleApproval>();
  const waiters = new Map<string, (w: Wake) => void>();

  const prune = () => {
    const closed = [...byId.values()].filter((a) => a.state === 'done');
    for (const a of closed.slice(0, Math.max(0, closed.length - KEEP_CLOSED))) {
      byId.delete(a.id);
      byCall.delete(a.callId);
    }
  };

  const unsubscribe = runner.onPendingClosed((callId, result) => {
    const a = byCall.get(callId);
    if (a === undefined || a.state === 'done') return;
    a.outcome =
      result === undefined
        ? 'closed: the session ended; not run'
        : a.state === 'kept'
          ? 'approved, but the tool was not called again in time; not run'
          : 'no decision in time; not run';
    a.state = 'done';
    waiters.get(a.id)?.({ kind: 'closed', result });
  });

  // Decided in the console of another server process sharing the log: as if decided here.
  const unsubscribeElsewhere = runner.onDecidedElsewhere((callId, d) => {
    const a = byCall.get(callId);
    if (a === undefined || a.state !== 'pending') return;
    a.decision = d.decision;
    a.decidedAt = now();
    a.decidedElsewhere = true;
    const waiter = waiters.get(a.id);
    if (d.result === undefined) {
      if (waiter !== undefined) {
        a.state = 'running';
        waiter({ kind: 'answer', answer: accept(d.decision) });
        return;
      }
      a.state = 'kept';
      a.outcome = 'it runs when the tool is called again';
      return;
    }
    a.state = 'done';
    a.outcome = 'not run';
    if (waiter !== undefined) waiter({ kind: 'closed', result: d.result });
    else a.result = d.result;
  });

  const add: ApprovalQueue['add'] = (input) => {
    prune();
    const a: ConsoleApproval = {
      ...input,
      id: randomBytes(12).toString('base64url'),
      csrf: randomBytes(32).toString('base64url'),
      askedAt: now(),
      state: 'pending',
    };
    byId.set(a.id, a);
    byCall.set(a.callId, a);
    return a;
  };

  const retryOf = (requestKey: string) =>
    [...byId.values()].find(
      (a) =>
        a.requestKey === requestKey &&
        (a.state === 'pending' ||
          a.state === 'recording' ||
          a.state === 'kept' ||
          (a.state === 'done' && a.result !== undefined)),
    );

  const claim = async (a: ConsoleApproval): Promise<Claim> => {
    await a.recorded;
    if (a.state === 'pending') return { kind: 'wait' };
    if (a.state === 'kept' && a.decision !== undefined) {
      a.state = 'running';
      return { kind: 'run', answer: accept(a.decision) };
    }
    if (a.state === 'done' && a.result !== undefined) {
      const result = a.result;
      delete a.result;
      return { kind: 'result', result };
    }
    return { kind: 'none' };
  };

  const wait: ApprovalQueue['wait'] = (a, { holdMs, signal }) =>
    new Promise<Wake>((resolve) => {
      // A newer request for the same approval takes over; the older one answers "pending".
      waiters.get(a.id)?.({ kind: 'released' });
      if (signal?.aborted === true) return resolve({ kind: 'aborted' });
      let settled = false;
      const onAbort = () => {
        if (a.state === 'pending') a.state = 'running';
        wake({ kind: 'aborted' });
      };
      const timer = setTimeout(() => wake({ kind: 'released' }), holdMs);
      timer.unref();
      const wake = (w: Wake) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        if (waiters.get(a.id) === wake) waiters.delete(a.id);
        resolve(w);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      waiters.set(a.id, wake);
    });

  const decide: ApprovalQueue['decide'] = async (id, csrf, decision, passkey) => {
    const a = byId.get(id);
    if (a === undefined) return 'unknown';
    if (!sameToken(csrf, a.csrf)) return 'bad_token';
    if (a.state !== 'pending') return 'not_pending';
    a.decision = decision;
    a.decidedAt = now();
    const waiter = waiters.get(a.id);
    if (waiter !== undefined) {
      a.state = 'running';
      waiter({ kind: 'answer', answer: accept(decision, passkey) });
      return 'decided';
    }
    // No request is waiting (it answered "pending"): record the decision now and keep it for the retry.
    a.state = 'recording';
    a.recorded = runner.recordAnswer(a.callId, a.session, accept(decision, passkey), 'console').then(
      (r) => {
        if (a.state !== 'recording') return;
        if (r.kind === 'approved') {
          a.state = 'kept';
          a.outcome = 'approved; it runs when the tool is called again';
        } else {
          a.state = 'done';
          a.result = r.result;
          a.outcome = r.result.callId === undefined ? 'no longer pending; not run' : 'refused; not run';
        }
      },
      (err: unknown) => {
        const gone = isSkillsError(err) && err.code === 'APPROVAL_DENIED';
        if (!gone) log.error({ err, callId: a.callId }, 'could not record a console decision');
        if (a.state !== 'recording') return;
        a.state = 'done';
        a.outcome = gone ? 'no longer pending; not run' : 'the decision could not be recorded; not run';
      },
    );
    await a.recorded;
    return 'decided';
  };

  const finish: ApprovalQueue['finish'] = (a, result, note) => {
    a.state = 'done';
    a.outcome =
      note ??
      (result.run !== undefined
        ? `ran: ${result.status}`
        : result.callId === undefined
          ? 'no longer pending; not run'
          : 'refused; not run');
  };

  const take: ApprovalQueue['take'] = (a) => {
    if (a.state !== 'pending' || waiters.has(a.id)) return false;
    a.state = 'running';
    return true;
  };

  const list = () => [...byId.values()].sort((x, y) => y.askedAt - x.askedAt);

  const close = () => {
    unsubscribe();
    unsubscribeElsewhere();
    for (const w of [...waiters.values()]) w({ kind: 'closed', result: undefined });
    waiters.clear();
  };

  return { add, retryOf, claim, wait, decide, take, finish, get: (id) => byId.get(id), list, close };
}
