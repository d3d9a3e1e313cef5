import type { Config } from '../config/config-schema.js';
import { type DecisionReason } from '../approvals/approval-decision.js';
import { refusalMessage, type RefusalContext } from '../approvals/refusal-message.js';
import { refused, type CallResult } from './call-result.js';
import type { PreparedCall } from './prepare-call.js';

/** What a refusal of this call says about it: the skill, script, policy, risk and approval settings. */
export const refusalContext = (call: PreparedCall, config: Config): RefusalContext => ({
  skill: call.skill.name,
  script: call.script,
  policy: call.policy.decision,
  rule: call.policy.rule,
  risk: call.risk.level,
  config: config.approval,
});

/** The refusal of a call decided with `reason` (nothing ran). */
export const deniedFor = (call: PreparedCall, config: Config, reason: DecisionReason, callId: string) =>
  refused('denied', refusalMessage(reason, refusalContext(call, config)), 'APPROVAL_DENIED', callId);

/** An answer or retry for a call that does not wait here (any more). */
export const notPending = (): CallResult =>
  refused(
    'denied',
    'This approval is no longer pending here: it was already answered, it timed out, the server restarted, ' +
      'or another server process (replica) asked it and keeps it. ' +
      'Nothing was run by this request. Call the tool again to ask anew.',
    'APPROVAL_DENIED',
  );

/** A retry that asks for something else than the call it continues (`what`: skill/script). */
export const retryMismatch = (what: string): CallResult =>
  refused(
    'invalid',
    `This request does not match the call it continues (${what} with the ` +
      'tool, arguments and input the person was asked about). Nothing was run. Retry with exactly the same ' +
      'tool, arguments and input, or call the tool without the continuation to ask anew.',
    'RETRY_MISMATCH',
  );
