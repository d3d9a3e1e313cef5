import { describe, expect, it } from 'vitest';
import type * as z from 'zod';
import {
  ApprovalConfigSchema,
  ApprovalRuleSchema,
  DEFAULT_SECRET_NAMES,
} from '../../src/config/approval-schema.js';

describe('ApprovalConfigSchema', () => {
  it('fills every default from {}', () => {
    expect(ApprovalConfigSchema.parse({})).toEqual({
      mode: 'ask',
      rules: [],
      high_risk: 'ask',
      require: 'none',
      timeout_ms: 120_000,
      loop_guard: 2,
      granularity: 'exact',
      fallback: 'deny',
      http_elicitation: 'token',
      console: false,
      console_wait_ms: 50_000,
      console_open_browser: true,
      secret_names: DEFAULT_SECRET_NAMES,
    });
  });

  it('describes every field', () => {
    expect(ApprovalConfigSchema.description).toBeTruthy();
    expect(ApprovalRuleSchema.description).toBeTruthy();
    for (const schema of [ApprovalConfigSchema, ApprovalRuleSchema]) {
      for (const [name, field] of Object.entries(schema.shape)) {
        expect({ name, description: (field as z.ZodType).description }).toEqual({
          name,
          description: expect.any(String),
        });
      }
    }
  });

  it.each([
    ['an unknown key (typo)', { hight_risk: 'deny' }, 'hight_risk'],
    ['a bad mode', { mode: 'maybe' }, 'mode'],
    ['high_risk allow', { high_risk: 'allow' }, 'high_risk'],
    ['a float timeout', { timeout_ms: 1.5 }, 'timeout_ms'],
    ['a tiny timeout', { timeout_ms: 10 }, 'timeout_ms'],
    ['a negative loop guard', { loop_guard: -1 }, 'loop_guard'],
    ['a rule without action', { rules: [{ skill: 'pdf' }] }, 'rules.0.action'],
    ['a skill pattern with a slash', { rules: [{ skill: 'pdf/x', action: 'allow' }] }, 'rules.0.skill'],
    [
      'a script escaping the skill',
      { rules: [{ skill: 'pdf', script: '../x.sh', action: 'allow' }] },
      'rules.0.script',
    ],
    [
      'an absolute script',
      { rules: [{ skill: 'pdf', script: '/bin/sh', action: 'allow' }] },
      'rules.0.script',
    ],
  ])('rejects %s at its path', (_name, input, at) => {
    const result = ApprovalConfigSchema.safeParse(input);
    expect(result.success).toBe(false);
    const paths = result.error!.issues.map((i) =>
      i.path.length ? i.path.join('.') : (i as { keys?: string[] }).keys?.join(','),
    );
    expect(paths).toContain(at);
  });
});
