import type { ApprovalAnswer } from '../approvals/approval-request.js';
import type { UnseenAnswer } from '../approvals/refusal-message.js';

/**
 * A decline or cancel faster than this is no person's: nobody reads the form and decides in under a second. Print
 * and exec modes (`claude -p`, `codex exec`) answer in milliseconds.
 */
export const UNSEEN_ANSWER_MS = 1_000;

/**
 * The answer as one the client gave without showing the form, or undefined when a person may have given it: only a
 * decline or cancel of the client's own form (an approval always counts as given), and only when it came too fast.
 */
export function unseenAnswer(
  answer: ApprovalAnswer,
  waitedMs: number,
  client: string | undefined,
): UnseenAnswer | undefined {
  if (answer.action !== 'decline' && answer.action !== 'cancel') return undefined;
  if (waitedMs >= UNSEEN_ANSWER_MS) return undefined;
  return { action: answer.action, ms: Math.max(0, waitedMs), ...(client === undefined ? {} : { client }) };
}
