import { isSkillsError } from '../errors.js';

/** Why a log shared by replicas refuses an approving decision or a start: the session family was stopped first. */
export const STOPPED_REFUSAL = 'the session was stopped';

/** The log refused an event because a stop ("deny and stop", any replica) was recorded before it. */
export const isStoppedRefusal = (e: unknown): boolean =>
  isSkillsError(e) && e.code === 'AUDIT_FAILED' && e.message.endsWith(`: ${STOPPED_REFUSAL}`);
