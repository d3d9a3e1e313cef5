import type { ApprovalConfig, PolicyAction } from '../config/approval-schema.js';
import type { Caller } from './caller.js';
import type { Risk } from './guard.js';
import { describeRule, matchesRule } from './match-rule.js';

export interface PolicyInput {
  /** Skill name. */
  skill: string;
  /**
   * The folder the name first stood for (see `SkillPins`), when this call's skill comes from another folder. Allow
   * rules are written for that first folder: for this one they ask instead.
   */
  firstFolder?: string;
  /** Script path relative to the skill folder (POSIX): the real file, links followed. */
  script: string;
  /** Other paths of the skill that are the same file (links to it): a rule naming any of them applies. */
  aliases?: readonly string[];
  risk: Pick<Risk, 'level' | 'reason'>;
  /** The signed-in caller (HTTP with OAuth), for rules that name callers. */
  caller?: Caller;
  config: Pick<ApprovalConfig, 'mode' | 'rules' | 'high_risk'>;
}

/** The policy's answer; `rule` names what decided, for `policy_decided` and the approval message. */
export interface PolicyDecision {
  decision: PolicyAction;
  /** Human-readable: `rules[1] (skill: pdf → allow)`, `mode: ask (no rule matched)`, `high_risk: deny`… */
  rule: string;
  reason: string;
}

/**
 * allow | ask | deny for one skill call. Order: a matching deny rule always wins; else the first matching
 * rule (an allow rule asks instead when the name now stands for another folder: `firstFolder`), else `mode`. Then risk: high ⇒ `high_risk` (deny, or ask even where a rule or mode allows);
 * medium ⇒ ask when only `mode: allow` (no rule) would allow it.
 */
export function decide({
  skill,
  script,
  aliases = [],
  firstFolder,
  risk,
  caller,
  config,
}: PolicyInput): PolicyDecision {
  const target = `${skill}/${script}`;
  const names = [script, ...aliases];
  const matches = config.rules.flatMap((r, i) =>
    names.some((name) => matchesRule(r, skill, name, caller)) ? [{ r, i }] : [],
  );
  const deny = matches.find((m) => m.r.action === 'deny');
  if (deny !== undefined) {
    return { decision: 'deny', rule: describeRule(deny.r, deny.i), reason: `a deny rule matches ${target}` };
  }
  const first = matches[0];
  const base: PolicyDecision =
    first === undefined
      ? {
          decision: config.mode,
          rule: `mode: ${config.mode} (no rule matched)`,
          reason: `no rule matches ${target}`,
        }
      : firstFolder !== undefined && first.r.action === 'allow'
        ? {
            decision: 'ask',
            rule: `${describeRule(first.r, first.i)}, not for this folder`,
            reason: `the allow rule for "${skill}" applies to the folder that first held the name; this call's skill is another folder that took it since`,
          }
        : {
            decision: first.r.action,
            rule: describeRule(first.r, first.i),
            reason: `first rule matching ${target}`,
          };

  if (risk.level === 'high') {
    if (config.high_risk === 'deny') {
      return { decision: 'deny', rule: 'high_risk: deny', reason: `high risk: ${risk.reason}` };
    }
    if (base.decision === 'allow') {
      const reason = `high risk always asks (${base.rule} would allow): ${risk.reason}`;
      return { decision: 'ask', rule: 'high_risk: ask', reason };
    }
    return { ...base, reason: `${base.reason}; high risk: ${risk.reason}` };
  }
  if (risk.level === 'medium' && base.decision === 'allow' && first === undefined) {
    const reason = `medium risk needs a rule to run without asking: ${risk.reason}`;
    return { decision: 'ask', rule: 'mode: allow (medium risk, no rule matched)', reason };
  }
  return risk.level === 'low'
    ? base
    : { ...base, reason: `${base.reason}; ${risk.level} risk: ${risk.reason}` };
}
