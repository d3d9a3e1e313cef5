import { isSkillsError } from '../errors.js';

/** The log refused a decision because the call was decided or closed meanwhile (by any server process). */
export const isDecidedElsewhere = (e: unknown): boolean =>
  isSkillsError(e) &&
  e.code === 'AUDIT_FAILED' &&
  /already decided|terminal event|session has ended/.test(e.message);
