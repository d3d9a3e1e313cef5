import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ApprovalConfigSchema } from '../../src/config/approval-schema.js';
import { decide } from '../../src/gate/policy.js';
import {
  noApproverMessage,
  refusalMessage,
  type RefusalContext,
} from '../../src/approvals/refusal-message.js';
import { resolveGate } from '../../src/approvals/resolve-gate.js';
import { createSessionState } from '../../src/approvals/session-state.js';
import { DECISION_REASONS } from '../../src/approvals/approval-decision.js';

const ctx = (over: Partial<RefusalContext> = {}): RefusalContext => ({
  skill: 'pdf',
  script: 'scripts/fill.py',
  policy: 'ask',
  risk: 'medium',
  config: ApprovalConfigSchema.parse({}),
  ...over,
});

const snippet = (message: string): unknown => parse(/```yaml\n([\s\S]*?)```/.exec(message)![1]!);

describe('noApproverMessage', () => {
  it.each([
    ['default config (fallback deny, mode ask)', {}],
    ['fallback already rules-only', { config: ApprovalConfigSchema.parse({ fallback: 'rules-only' }) }],
    ['policy allowed but fallback deny', { policy: 'allow' as const }],
    ['an odd skill name', { skill: 'My Skill: v2', script: 'scripts/run me.sh' }],
  ])('gives a YAML snippet that, merged into the config, lets %s run without a prompt', (_name, over) => {
    const c = ctx(over);
    const message = noApproverMessage(c);
    expect(message).toContain('skills-mcp.yaml');
    const { approval } = snippet(message) as { approval: Record<string, unknown> };
    const config = ApprovalConfigSchema.parse({
      ...c.config,
      ...approval,
      rules: [...((approval.rules as []) ?? [])],
    });
    const policy = decide({ skill: c.skill, script: c.script, risk: { level: c.risk, reason: 'r' }, config });
    const gate = resolveGate({
      policy: c.policy === 'allow' ? { decision: 'allow' } : policy,
      session: createSessionState({ loopGuard: 2 }),
      approvalKey: 'k',
      canAsk: false,
      config,
    });
    expect(gate).toEqual({ action: 'run', outcome: { decision: 'approved', reason: 'rules' } });
  });

  it('names the skill in the snippet', () => {
    expect(noApproverMessage(ctx())).toContain('    - skill: pdf\n      script: scripts/fill.py');
  });

  it('explains that a high-risk skill cannot be allowed by config', () => {
    const message = noApproverMessage(ctx({ risk: 'high' }));
    expect(message).toContain('high risk');
    expect(message).not.toContain('```yaml');
  });
});

describe('refusalMessage', () => {
  it.each(DECISION_REASONS.filter((r) => r !== 'cached'))('has an actionable text for %s', (reason) => {
    const text = refusalMessage(reason, ctx({ rule: 'rules[0] (skill: pdf → deny)' }));
    expect(text.length).toBeGreaterThan(20);
    expect(text).toMatch(/pdf|session/);
  });

  it('states the loop guard count and the timeout in seconds', () => {
    expect(refusalMessage('loop_guard', ctx())).toContain('2 times');
    expect(refusalMessage('timeout', ctx())).toContain('120 s');
  });
});
