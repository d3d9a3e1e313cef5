import { newCallId } from '../audit/call-id.js';
import type { CallLog } from '../audit/call-log.js';
import type { CallerRecord } from '../audit/caller-record-schema.js';
import type { SkillsError } from '../errors.js';
import { checkRelativePath } from '../skills/resolve-skill-path.js';
import { finishedEvent } from './call-events.js';
import { withCaller } from './caller-record.js';
import type { CallRequest } from './call-request.js';
import { safeSummary } from './safe-summary.js';

/** Records a call refused before it was bound (bad arguments, unknown script): requested and finished as invalid. */
export async function recordInvalid(
  audit: CallLog,
  sessionId: string,
  req: CallRequest,
  e: SkillsError,
  caller?: CallerRecord,
): Promise<string> {
  let script: string | undefined;
  try {
    script = req.script === undefined ? req.skill.entryPoint : checkRelativePath(req.script);
  } catch {
    script = undefined;
  }
  const callId = newCallId();
  const payload = {
    tool: req.tool,
    skill: req.skill.name,
    ...(script === undefined ? {} : { script }),
    ...safeSummary(req.input),
    bundle_sha256: null,
    approval_key: null,
    valid: false,
    error_code: e.code,
    ...withCaller(caller),
  };
  await audit.appendMany([
    { type: 'tool_call_requested', sessionId, callId, payload },
    finishedEvent(sessionId, callId, 'invalid', { code: e.code }),
  ]);
  return callId;
}
