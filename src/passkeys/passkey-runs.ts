import type { HashedFields } from '../audit/event-hash.js';

const RUN_STATUSES: ReadonlySet<string> = new Set(['ok', 'error', 'timeout', 'sandbox_denied']);

/** Whether a `tool_call_finished` says a script ran: a run's status, or anything of a process or its output. */
export function recordsRun(payload: unknown): boolean {
  const p = (typeof payload === 'object' && payload !== null ? payload : {}) as Record<string, unknown>;
  return (
    RUN_STATUSES.has(String(p.status)) ||
    (p.exit_code !== null && p.exit_code !== undefined) ||
    (p.stdout_sha256 !== null && p.stdout_sha256 !== undefined) ||
    p.signal !== undefined ||
    p.workspace_changes !== undefined ||
    (Array.isArray(p.artifacts) && p.artifacts.length > 0)
  );
}

type RunState = 'asked' | 'approved' | 'started' | 'ended' | 'named';

/**
 * Follows the runs of the calls that needed a passkey, in log order: each runs once, and only after its approval (the
 * approval itself is judged where it is recorded). A start, or an end that says it ran, after a denial or with no
 * decision (the log's order rules hold back only a call's end), or a second one on the same approval, is named: the
 * server's PostgreSQL role, which may only append, can write such events, and no passkey approved them.
 */
export function createPasskeyRuns(): {
  /** The call's `approval_requested` says it needs a passkey. */
  need(callId: string): void;
  /** An approving decision of the call was recorded. */
  approve(callId: string): void;
  /** Why a start or an end of a call that needed a passkey does not stand; undefined when it does (or is not one). */
  judge(e: HashedFields): string | undefined;
} {
  const calls = new Map<string, RunState>();
  const judge = (e: HashedFields): string | undefined => {
    const start = e.type === 'tool_call_started';
    if (e.call_id === null || !(start || (e.type === 'tool_call_finished' && recordsRun(e.payload)))) return;
    const state = calls.get(e.call_id);
    if (state === undefined || state === 'named') return;
    const next: RunState | undefined =
      state === 'approved'
        ? start
          ? 'started'
          : 'ended'
        : state === 'started' && !start
          ? 'ended'
          : undefined;
    if (next !== undefined) return void calls.set(e.call_id, next);
    calls.set(e.call_id, 'named');
    const what = start ? 'started' : 'recorded as run';
    return state === 'asked'
      ? `the call needed a passkey approval, and it was ${what} without one`
      : `the call needed a passkey approval, and it was ${what} again on its one approval`;
  };
  return {
    need: (callId) => void (calls.has(callId) ? undefined : calls.set(callId, 'asked')),
    approve: (callId) => void (calls.get(callId) === 'asked' ? calls.set(callId, 'approved') : undefined),
    judge,
  };
}
