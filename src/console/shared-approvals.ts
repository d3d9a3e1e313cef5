import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { CallLog } from '../audit/call-log.js';
import type { ApprovalDecision, ApprovalView } from '../gate/index.js';
import type { Logger } from '../log.js';
import type { Runner, SeenCall, SharedRecorded } from '../runner/runner-types.js';
import { parseSharedApproval } from '../runner/shared-approval.js';
import type { ConsoleApproval, DecideResult } from './approval-queue.js';

/**
 * The console approvals waiting on the other server processes that share this one's audit log (PostgreSQL), as
 * they shared them: shown here with the same facts and buttons as this process's own, and decided here by
 * recording the decision in the shared log for the process that holds the call.
 */
export interface SharedApprovals {
  /** Reads the approvals waiting elsewhere now; with those decided here or gone since, newest first. */
  list(): Promise<ConsoleApproval[]>;
  get(id: string): ConsoleApproval | undefined;
  /** A decision from the page (POST), for an approval waiting elsewhere. */
  decide(id: string, csrf: string, decision: ApprovalDecision): Promise<DecideResult>;
  /** What the person is shown of a call waiting elsewhere (its input in full), as last read. */
  view(callId: string): ApprovalView | undefined;
}

/** At most this many approvals waiting elsewhere are read per look. */
const MAX_SHOWN = 100;
const KEEP_CLOSED = 50;

const OUTCOMES: Record<SharedRecorded['kind'], string> = {
  approved: 'approved; it runs on the server process that holds the call',
  denied: 'refused; not run',
  stopped: 'refused: the session had been stopped; not run',
  gone: 'no longer pending; not run',
  mismatch: 'not recorded: what was shown is not what the call recorded; not run',
};

function sameToken(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export function createSharedApprovals(deps: {
  runner: Runner;
  audit: () => Promise<CallLog>;
  log: Logger;
  now?: () => number;
}): SharedApprovals {
  const { runner, log } = deps;
  const now = deps.now ?? Date.now;
  const byId = new Map<string, ConsoleApproval>();
  const byCall = new Map<string, { a: ConsoleApproval; seen: SeenCall }>();
  let failing = false;

  const forget = (a: ConsoleApproval) => {
    byId.delete(a.id);
    byCall.delete(a.callId);
  };

  const list = async (): Promise<ConsoleApproval[]> => {
    let read: Awaited<ReturnType<NonNullable<CallLog['pendingViews']>['others']>> | undefined;
    try {
      read = await (await deps.audit()).pendingViews?.others(MAX_SHOWN);
      failing = false;
    } catch (err) {
      if (!failing) log.warn({ err }, 'approval console could not read the approvals waiting elsewhere');
      failing = true;
    }
    if (read !== undefined) {
      const waiting = new Set<string>();
      for (const r of read) {
        const s = parseSharedApproval(r.body);
        if (
          s === undefined ||
          s.callId !== r.callId ||
          s.sessionId !== r.sessionId ||
          s.view.callId !== r.callId
        )
          continue;
        waiting.add(r.callId);
        if (byCall.has(r.callId)) continue;
        const a: ConsoleApproval = {
          id: randomBytes(12).toString('base64url'),
          csrf: randomBytes(32).toString('base64url'),
          callId: r.callId,
          session: {
            id: r.sessionId,
            transport: 'http',
            ...(s.caller === undefined ? {} : { caller: { ...s.caller, groups: 'unknown' as const } }),
          },
          requestKey: '',
          view: s.view,
          askedAt: s.askedAt,
          elsewhere: `${r.host} (pid ${r.pid})`,
          state: 'pending',
        };
        byId.set(a.id, a);
        byCall.set(r.callId, {
          a,
          seen: {
            sessionId: r.sessionId,
            approvalKey: s.approvalKey,
            inputSha256: s.view.inputSummary.input_sha256,
            bundleSha256: s.view.bundleSha256,
          },
        });
      }
      // Decided or closed elsewhere (or expired) since the last look.
      for (const { a } of byCall.values()) {
        if (a.state !== 'pending' || waiting.has(a.callId)) continue;
        a.state = 'done';
        a.outcome = 'no longer waiting: decided or closed elsewhere';
      }
      const closed = [...byId.values()].filter((a) => a.state === 'done');
      for (const a of closed.slice(0, Math.max(0, closed.length - KEEP_CLOSED))) forget(a);
    }
    return [...byId.values()].sort((x, y) => y.askedAt - x.askedAt);
  };

  const decide: SharedApprovals['decide'] = async (id, csrf, decision) => {
    const a = byId.get(id);
    if (a === undefined) return 'unknown';
    if (!sameToken(csrf, a.csrf)) return 'bad_token';
    if (a.state !== 'pending') return 'not_pending';
    const seen = byCall.get(a.callId)!.seen;
    a.state = 'recording';
    a.decision = decision;
    a.decidedAt = now();
    try {
      const r = await runner.recordSharedAnswer(a.callId, seen, {
        action: 'accept',
        content: { decision },
      });
      a.outcome = OUTCOMES[r.kind];
    } catch (err) {
      log.error({ err, callId: a.callId }, 'could not record a console decision');
      a.outcome = 'the decision could not be recorded; not run';
    }
    a.state = 'done';
    return 'decided';
  };

  return {
    list,
    get: (id) => byId.get(id),
    decide,
    view: (callId) => {
      const e = byCall.get(callId);
      return e?.a.state === 'pending' ? e.a.view : undefined;
    },
  };
}
