import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ApprovalConfigSchema } from '../../src/config/approval-schema.js';
import { decide } from '../../src/gate/policy.js';
import { refusalMessage, type RefusalContext } from '../../src/approvals/refusal-message.js';
import { resolveGate } from '../../src/approvals/resolve-gate.js';
import { createSessionState } from '../../src/approvals/session-state.js';
import { unseenAnswer, UNSEEN_ANSWER_MS } from '../../src/runner/unseen-answer.js';

const ctx = (over: Partial<RefusalContext> = {}): RefusalContext => ({
  skill: 'pdf',
  script: 'scripts/fill.py',
  policy: 'ask',
  risk: 'medium',
  config: ApprovalConfigSchema.parse({}),
  unseen: { action: 'cancel', ms: 4, client: 'claude-code 2.1.197' },
  ...over,
});

describe('unseenAnswer', () => {
  it.each([
    [{ action: 'cancel' } as const, 3, true],
    [{ action: 'decline' } as const, UNSEEN_ANSWER_MS - 1, true],
    [{ action: 'decline' } as const, UNSEEN_ANSWER_MS, false],
    [{ action: 'accept', content: { decision: 'denied' } } as const, 3, false],
    [{ action: 'error' } as const, 3, false],
  ])('tells an answer no one saw from one a person may have given (%j after %i ms)', (answer, ms, unseen) => {
    expect(unseenAnswer(answer, ms, 'c 1') !== undefined).toBe(unseen);
  });
});

describe('the refusal for an answer no one saw', () => {
  it('says what the client did, without blaming a person, and names the client', () => {
    const text = refusalMessage('answered_unseen', ctx());
    expect(text).not.toMatch(/the user (dismissed|denied)/i);
    expect(text).toContain(
      'The MCP client (claude-code 2.1.197) cancelled the approval form 4 ms after it was sent',
    );
    expect(text).toContain('without showing it');
  });

  it('gives a snippet that lets the call run in a client that declares forms but never shows them', () => {
    const c = ctx();
    const { approval } = parse(/```yaml\n([\s\S]*?)```/.exec(refusalMessage('answered_unseen', c))![1]!) as {
      approval: Record<string, unknown>;
    };
    const config = ApprovalConfigSchema.parse(approval);
    const policy = decide({ skill: c.skill, script: c.script, risk: { level: c.risk, reason: 'r' }, config });
    for (const canAsk of [true, false]) {
      const gate = resolveGate({
        policy,
        session: createSessionState({ loopGuard: 2 }),
        approvalKey: 'k',
        canAsk,
        config,
      });
      expect(gate).toEqual({ action: 'run', outcome: { decision: 'approved', reason: 'rules' } });
    }
  });

  it('names the approval console as the other way', () => {
    expect(refusalMessage('answered_unseen', ctx())).toContain('--no-elicitation --approval-console');
  });

  it('offers no allow rule for a high-risk skill, only ways that reach a person', () => {
    const text = refusalMessage('answered_unseen', ctx({ risk: 'high' }));
    expect(text).not.toContain('```yaml');
    expect(text).toContain('--approval-console');
    expect(text).toContain('skills-mcp run');
  });
});
