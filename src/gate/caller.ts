import type { CallerCondition } from '../config/approval-schema.js';

/**
 * A signed-in caller (HTTP with OAuth): who the verified access token names. Policy rules match it; the audit log
 * records its subject (or the subject's digest). Never the token itself.
 */
export interface Caller {
  /** The token's issuer (`iss`). */
  issuer: string;
  /** The token's subject (`sub`, or the configured subject claim). */
  subject: string;
  /** The groups the token lists (the configured groups claim); empty when it lists none. */
  groups: readonly string[];
}

/** Whether a rule's caller condition holds: a listed subject, or a listed group. No caller, no match. */
export function matchesCaller(condition: CallerCondition, caller: Caller | undefined): boolean {
  if (caller === undefined) return false;
  return (
    condition.subjects.includes(caller.subject) || caller.groups.some((g) => condition.groups.includes(g))
  );
}
