import { randomBytes, timingSafeEqual } from 'node:crypto';
import type { CallLog } from '../audit/call-log.js';
import type { PendingViewBoard, WaitingView } from '../audit/replica-log.js';
import { summarizeInput } from '../gate/index.js';
import type { ApprovalView } from '../approvals/approval-view.js';
import type { Logger } from '../log.js';
import type { Runner, SeenCall, SharedRecorded } from '../runner/runner-types.js';
import { parseSharedApproval, parseSharedInput, type SharedApproval } from '../approvals/replica-card.js';
import type { ConsoleApproval, DecideApproval } from './approval-queue.js';

/**
 * The console approvals waiting on the other server processes that share this one's audit log (PostgreSQL), as
 * they shared them: shown here with the same facts and buttons as this process's own, and decided here by
 * recording the decision in the shared log for the process that holds the call.
 */
export interface SharedApprovals {
  /**
   * Looks at the approvals waiting elsewhere (at most one look at a time, and about one a second: concurrent and
   * quick page views share a look); with those decided here or gone since, newest first.
   */
  list(): Promise<ConsoleApproval[]>;
  /** How many approvals waiting elsewhere the last look did not list (past {@link MAX_SHOWN}). */
  notListed(): number;
  get(id: string): ConsoleApproval | undefined;
  /** A decision from the page (POST), for an approval waiting elsewhere. */
  decide: DecideApproval;
  /**
   * What the person is shown of a call waiting elsewhere with its arguments and input in full, read for the page
   * that shows them (only while the call still waits, and only if the input is the one whose digest was recorded).
   */
  fullView(callId: string): Promise<ApprovalView | undefined>;
}

/** At most this many approvals waiting elsewhere are listed per look, shared in turn among callers. */
export const MAX_SHOWN = 100;
const KEEP_CLOSED = 50;
/** Page views closer together than this share one look. */
const LOOK_EVERY_MS = 1_000;

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

/** The card a listed row opened to, when it is a valid one for that row. */
function validCard(w: WaitingView, v: { sessionId: string; body: unknown } | undefined) {
  const s = v === undefined ? undefined : parseSharedApproval(v.body);
  const fits =
    s !== undefined &&
    s.callId === w.callId &&
    s.sessionId === w.sessionId &&
    v?.sessionId === w.sessionId &&
    s.view.callId === w.callId;
  return fits ? s : undefined;
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
  /** Listed calls whose card does not open or is not valid: not read again while they stay listed. */
  const unreadable = new Set<string>();
  let failing = false;
  let looking: Promise<void> | undefined;
  let lookedAt: number | undefined;
  let hidden = 0;
  /** The last input read in full (one at a time: it may be large). */
  let lastInput: { callId: string; view: ApprovalView } | undefined;

  const forget = (a: ConsoleApproval) => {
    byId.delete(a.id);
    byCall.delete(a.callId);
  };

  const hold = (w: WaitingView, s: SharedApproval) => {
    const a: ConsoleApproval = {
      id: randomBytes(12).toString('base64url'),
      csrf: randomBytes(32).toString('base64url'),
      callId: w.callId,
      session: {
        id: w.sessionId,
        transport: 'http',
        ...(s.caller === undefined ? {} : { caller: { ...s.caller, groups: 'unknown' as const } }),
      },
      requestKey: '',
      // Neither arguments nor input: the card shows `display`; the call's page reads them (`fullView`).
      view: { ...s.view, argv: [], input: undefined },
      display: s.display,
      askedAt: s.askedAt,
      elsewhere: `${w.host} (pid ${w.pid})`,
      state: 'pending',
    };
    byId.set(a.id, a);
    byCall.set(w.callId, {
      a,
      seen: {
        sessionId: w.sessionId,
        approvalKey: s.approvalKey,
        inputSha256: s.view.inputSummary.input_sha256,
        bundleSha256: s.view.bundleSha256,
      },
    });
  };

  /**
   * One look: the ids of the approvals waiting elsewhere (fairly capped), the cards of those not held yet (each read
   * and opened once), and for held ones not listed now, whether they still wait (asked by id: being crowded out of
   * the listing is not being decided).
   */
  const look = async (board: PendingViewBoard) => {
    const { listed, total } = await board.waiting(MAX_SHOWN);
    const ids = new Set(listed.map((w) => w.callId));
    for (const id of unreadable) if (!ids.has(id)) unreadable.delete(id);
    const fresh = listed.filter((w) => !byCall.has(w.callId) && !unreadable.has(w.callId));
    const cards = new Map((await board.cards(fresh.map((w) => w.callId))).map((v) => [v.callId, v]));
    for (const w of fresh) {
      const v = cards.get(w.callId);
      const s = validCard(w, v);
      if (v === undefined || s === undefined) unreadable.add(w.callId);
      else hold({ ...w, host: v.host, pid: v.pid }, s);
    }
    const unlisted = [...byCall.values()]
      .filter(({ a }) => a.state === 'pending' && !ids.has(a.callId))
      .map(({ a }) => a.callId);
    const still = await board.stillWaiting(unlisted);
    for (const callId of unlisted) {
      if (still.has(callId)) continue;
      const { a } = byCall.get(callId)!;
      a.state = 'done';
      a.outcome = 'no longer waiting: decided or closed elsewhere';
    }
    hidden = Math.max(0, total - listed.length - still.size);
    const closed = [...byId.values()].filter((a) => a.state === 'done');
    for (const a of closed.slice(0, Math.max(0, closed.length - KEEP_CLOSED))) forget(a);
  };

  const refresh = (): Promise<void> => {
    if (looking !== undefined) return looking;
    if (lookedAt !== undefined && now() - lookedAt < LOOK_EVERY_MS) return Promise.resolve();
    looking = (async () => {
      try {
        const board = (await deps.audit()).replicas?.pendingViews;
        if (board !== undefined) await look(board);
        failing = false;
      } catch (err) {
        if (!failing) log.warn({ err }, 'approval console could not read the approvals waiting elsewhere');
        failing = true;
      } finally {
        lookedAt = now();
        looking = undefined;
      }
    })();
    return looking;
  };

  const list = async (): Promise<ConsoleApproval[]> => {
    await refresh();
    return [...byId.values()].sort((x, y) => y.askedAt - x.askedAt);
  };

  const decide: SharedApprovals['decide'] = async (id, csrf, decision, passkey) => {
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
        ...(passkey === undefined ? {} : { passkey }),
      });
      a.outcome = OUTCOMES[r.kind];
    } catch (err) {
      log.error({ err, callId: a.callId }, 'could not record a console decision');
      a.outcome = 'the decision could not be recorded; not run';
    }
    a.state = 'done';
    return 'decided';
  };

  const fullView = async (callId: string): Promise<ApprovalView | undefined> => {
    const e = byCall.get(callId);
    if (e?.a.state !== 'pending') return undefined;
    if (lastInput?.callId === callId) return lastInput.view;
    let opened: unknown;
    try {
      opened = await (await deps.audit()).replicas?.pendingViews?.input(callId);
    } catch (err) {
      log.warn({ err, callId }, 'approval console could not read the input of an approval waiting elsewhere');
      return undefined;
    }
    const i = parseSharedInput(opened);
    if (i === undefined) return undefined;
    let digest: string;
    try {
      digest = summarizeInput(i.input).input_sha256;
    } catch {
      return undefined;
    }
    // Only the input the person is asked about: the one whose digest the card (and the log) holds.
    if (digest !== e.seen.inputSha256) return undefined;
    const view = { ...e.a.view, argv: i.argv, input: i.input };
    lastInput = { callId, view };
    return view;
  };

  return {
    list,
    notListed: () => hidden,
    get: (id) => byId.get(id),
    decide,
    fullView,
  };
}
