import type { ElicitResult, ServerContext } from '@modelcontextprotocol/server';
import type { ApprovalAnswer } from '../approvals/approval-request.js';
import { refused, type CallResult } from '../runner/call-result.js';
import type { CallRequest } from '../runner/call-request.js';
import type { Begin, CallContext, Runner } from '../runner/runner-types.js';

type Asked = Extract<Begin, { kind: 'ask' }>;

/** Progress while a person decides, this often: well inside common client timeouts (60 s), and a few per wait. */
export const waitHeartbeatMs = (timeoutMs: number): number =>
  Math.min(15_000, Math.max(250, Math.floor(timeoutMs / 8)));

const CLOSED = refused(
  'denied',
  'This approval is no longer pending: its session ended or the server is stopping. Nothing was run.',
  'APPROVAL_DENIED',
);

const toAnswer = (r: ElicitResult): ApprovalAnswer =>
  r.action === 'accept' ? { action: 'accept', content: r.content } : { action: r.action };

/**
 * Asks a 2025-era client for approval while its `tools/call` stays open (an `elicitation/create` tied to it),
 * instead of through the SDK's legacy shim, so that skills-mcp, not the shim, decides how the wait ends:
 * - while the person decides, progress on the call's token (a client that resets its timeout on progress waits);
 * - the client cancelling the call (its own timeout) is recorded at once as `request_cancelled`;
 * - when skills-mcp stops waiting (`timeout_ms`, a stop, the session's end) the form is withdrawn and the client
 *   gets skills-mcp's own refusal, with its `_meta`.
 */
export async function askInRequest(
  runner: Runner,
  asked: Asked,
  /** The `elicitation/create` params, in the session's revision. */
  params: { message: string; requestedSchema: unknown; mode?: 'form' },
  req: CallRequest,
  cctx: CallContext,
  ctx: ServerContext,
  timeoutMs: number,
): Promise<CallResult> {
  const { callId } = asked;
  const target = `${asked.view.skill}/${asked.view.script}`;
  const withdraw = new AbortController();
  let closed!: (r: CallResult | undefined) => void;
  const whenClosed = new Promise<CallResult | undefined>((resolve) => (closed = resolve));
  const unsubscribe = runner.onPendingClosed((id, r) => {
    if (id === callId) closed(r);
  });
  const waiting = `waiting for the user to approve ${target}`;
  void cctx.progress?.(0, waiting);
  const heartbeat =
    cctx.progress === undefined
      ? undefined
      : setInterval(() => void cctx.progress?.(0, waiting), waitHeartbeatMs(timeoutMs));
  heartbeat?.unref();
  try {
    const answered = ctx.mcpReq
      .send(
        { method: 'elicitation/create', params },
        // skills-mcp's own timer ends the wait first (and withdraws the form); this is only a backstop.
        { signal: AbortSignal.any([ctx.mcpReq.signal, withdraw.signal]), timeout: timeoutMs + 5_000 },
      )
      .then(
        (r) => ({ kind: 'answer' as const, answer: toAnswer(r) }),
        (error: unknown) => ({ kind: 'failed' as const, error }),
      );
    const first = await Promise.race([
      answered,
      whenClosed.then((result) => ({ kind: 'closed' as const, result })),
    ]);
    if (first.kind === 'closed') return first.result ?? CLOSED;
    if (ctx.mcpReq.signal.aborted) return await runner.abandon(callId, req.session);
    const answer: ApprovalAnswer =
      first.kind === 'answer' ? first.answer : { action: 'error', error: first.error };
    return await runner.resume(callId, req.session, answer, cctx, req);
  } finally {
    clearInterval(heartbeat);
    unsubscribe();
    // Withdraws a form still open (the SDK sends notifications/cancelled for it); a no-op once answered.
    withdraw.abort();
  }
}
