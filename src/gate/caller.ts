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
  /**
   * The groups the token lists (the configured groups claim); empty when it has no such claim. `unknown` when the
   * claim is there but not a string or a list of strings, or the issuer left it out as too long (Entra ID's
   * "overage": `_claim_names` names it): the person's groups cannot be told.
   */
  groups: readonly string[] | 'unknown';
}

/**
 * Whether a rule's caller condition holds: a listed subject, or a listed group. No caller, no match. When the
 * caller's groups are unknown, a rule that denies by group applies (fail closed) and one that allows or asks by
 * group does not.
 */
export function matchesCaller(
  condition: CallerCondition,
  caller: Caller | undefined,
  action: 'allow' | 'ask' | 'deny',
): boolean {
  if (caller === undefined) return false;
  if (condition.subjects.includes(caller.subject)) return true;
  if (caller.groups === 'unknown') return action === 'deny' && condition.groups.length > 0;
  return caller.groups.some((g) => condition.groups.includes(g));
}
