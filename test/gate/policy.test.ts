import { describe, expect, it } from 'vitest';
import { ApprovalConfigSchema, type ApprovalConfigInput } from '../../src/config/approval-schema.js';
import { decide } from '../../src/gate/policy.js';
import type { RiskLevel } from '../../src/gate/guard.js';

const run = (config: ApprovalConfigInput, level: RiskLevel, skill = 'pdf', script = 'scripts/fill.py') =>
  decide({
    skill,
    script,
    risk: { level, reason: `${level} reason` },
    config: ApprovalConfigSchema.parse(config),
  });

describe('decide', () => {
  it.each<[string, ApprovalConfigInput, RiskLevel, string, string]>([
    ['default config asks', {}, 'low', 'ask', 'mode: ask (no rule matched)'],
    ['mode allow, low risk', { mode: 'allow' }, 'low', 'allow', 'mode: allow (no rule matched)'],
    ['mode deny', { mode: 'deny' }, 'low', 'deny', 'mode: deny (no rule matched)'],
    [
      'mode allow, medium risk, no rule → ask',
      { mode: 'allow' },
      'medium',
      'ask',
      'mode: allow (medium risk, no rule matched)',
    ],
    [
      'an allow rule, medium risk → allow',
      { rules: [{ skill: 'pdf', action: 'allow' }] },
      'medium',
      'allow',
      'rules[0] (skill: pdf → allow)',
    ],
    ['mode allow + high_risk ask → ask', { mode: 'allow' }, 'high', 'ask', 'high_risk: ask'],
    [
      'an allow rule + high risk → ask',
      { rules: [{ skill: 'pdf', action: 'allow' }] },
      'high',
      'ask',
      'high_risk: ask',
    ],
    [
      'high_risk deny beats an allow rule',
      { high_risk: 'deny', rules: [{ skill: 'pdf', action: 'allow' }] },
      'high',
      'deny',
      'high_risk: deny',
    ],
    [
      'high_risk deny, low risk allowed',
      { high_risk: 'deny', mode: 'allow' },
      'low',
      'allow',
      'mode: allow (no rule matched)',
    ],
    ['mode deny + high risk stays deny', { mode: 'deny' }, 'high', 'deny', 'mode: deny (no rule matched)'],
    [
      'an ask rule + high risk asks by that rule',
      { rules: [{ skill: 'pdf', action: 'ask' }] },
      'high',
      'ask',
      'rules[0] (skill: pdf → ask)',
    ],
    [
      'mode deny, allow rule → allow',
      { mode: 'deny', rules: [{ skill: 'pdf', action: 'allow' }] },
      'low',
      'allow',
      'rules[0] (skill: pdf → allow)',
    ],
    [
      'first match wins (allow before ask)',
      {
        rules: [
          { skill: 'pdf', script: 'scripts/fill.py', action: 'allow' },
          { skill: 'pdf', action: 'ask' },
        ],
      },
      'low',
      'allow',
      'rules[0] (skill: pdf, script: scripts/fill.py → allow)',
    ],
    [
      'first match wins (ask before allow)',
      {
        mode: 'allow',
        rules: [
          { skill: 'pdf', action: 'ask' },
          { skill: '*', action: 'allow' },
        ],
      },
      'low',
      'ask',
      'rules[0] (skill: pdf → ask)',
    ],
    [
      'deny beats an earlier allow',
      {
        rules: [
          { skill: '*', action: 'allow' },
          { skill: 'pdf', script: '*.py', action: 'deny' },
        ],
      },
      'low',
      'deny',
      'rules[1] (skill: pdf, script: *.py → deny)',
    ],
    [
      'a non-matching deny does nothing',
      {
        rules: [
          { skill: '*', action: 'allow' },
          { skill: 'pdf', script: 'other.py', action: 'deny' },
        ],
      },
      'low',
      'allow',
      'rules[0] (skill: * → allow)',
    ],
  ])('%s', (_name, config, level, decision, rule) => {
    expect(run(config, level)).toMatchObject({ decision, rule });
  });

  it('says why in the reason', () => {
    expect(run({ mode: 'allow' }, 'high').reason).toContain('high reason');
    expect(run({ rules: [{ skill: 'pdf', action: 'deny' }] }, 'low').reason).toBe(
      'a deny rule matches pdf/scripts/fill.py',
    );
  });

  it('asks instead of allowing when the name now stands for another folder; deny and ask rules still match', () => {
    const moved = (rules: ApprovalConfigInput['rules']) =>
      decide({
        skill: 'pdf',
        script: 'scripts/fill.py',
        firstFolder: '/skills/a/pdf',
        risk: { level: 'low', reason: 'r' },
        config: ApprovalConfigSchema.parse({ rules }),
      });
    expect(moved([{ skill: 'pdf', action: 'allow' }])).toMatchObject({
      decision: 'ask',
      rule: 'rules[0] (skill: pdf → allow), not for this folder',
    });
    expect(moved([{ skill: 'pdf', action: 'deny' }]).decision).toBe('deny');
    expect(moved([{ skill: '*', action: 'ask' }]).decision).toBe('ask');
  });
});

describe('decide for a signed-in caller', () => {
  const base = () => ({
    skill: 'pdf',
    script: 'scripts/fill.py',
    risk: { level: 'low' as const, reason: 'r' },
  });
  const alice = { issuer: 'https://idp.example', subject: 'alice', groups: ['ops'] };
  const bob = { issuer: 'https://idp.example', subject: 'bob', groups: ['dev'] };
  const forCaller = (rules: ApprovalConfigInput['rules'], caller?: typeof alice) =>
    decide({
      skill: 'pdf',
      script: 'scripts/fill.py',
      risk: { level: 'low', reason: 'r' },
      ...(caller === undefined ? {} : { caller }),
      config: ApprovalConfigSchema.parse({ rules }),
    });

  it('matches a rule naming a group or a subject of the caller, and no other caller', () => {
    const byGroup = [{ skill: 'pdf', caller: { groups: ['ops'] }, action: 'allow' as const }];
    expect(forCaller(byGroup, alice)).toMatchObject({
      decision: 'allow',
      rule: 'rules[0] (skill: pdf, caller: listed → allow)',
    });
    expect(forCaller(byGroup, bob).decision).toBe('ask');
    const bySubject = [{ skill: 'pdf', caller: { subjects: ['bob'] }, action: 'allow' as const }];
    expect(forCaller(bySubject, bob).decision).toBe('allow');
    expect(forCaller(bySubject, alice).decision).toBe('ask');
  });

  it('never matches a caller rule without a signed-in caller, deny rules included', () => {
    expect(forCaller([{ skill: 'pdf', caller: { groups: ['ops'] }, action: 'allow' }]).decision).toBe('ask');
    const denyDev = [
      { skill: 'pdf', caller: { groups: ['dev'] }, action: 'deny' as const },
      { skill: 'pdf', action: 'allow' as const },
    ];
    expect(forCaller(denyDev, bob).decision).toBe('deny');
    expect(forCaller(denyDev, alice).decision).toBe('allow');
    expect(forCaller(denyDev).decision).toBe('allow');
  });

  it("applies a rule that denies by group, and none that allows by group, when the caller's groups are unknown", () => {
    const carol = { issuer: 'https://idp.example', subject: 'carol', groups: 'unknown' as const };
    const rules = [
      { skill: 'pdf', caller: { groups: ['contractors'] }, action: 'deny' as const },
      { skill: 'pdf', action: 'allow' as const },
    ];
    expect(decide({ ...base(), caller: carol, config: ApprovalConfigSchema.parse({ rules }) }).decision).toBe(
      'deny',
    );
    const allowOps = [{ skill: 'pdf', caller: { groups: ['ops'] }, action: 'allow' as const }];
    expect(
      decide({ ...base(), caller: carol, config: ApprovalConfigSchema.parse({ rules: allowOps }) }).decision,
    ).toBe('ask');
    const bySubject = [{ skill: 'pdf', caller: { subjects: ['carol'] }, action: 'allow' as const }];
    expect(
      decide({ ...base(), caller: carol, config: ApprovalConfigSchema.parse({ rules: bySubject }) }).decision,
    ).toBe('allow');
  });

  it('refuses a caller condition that lists nobody', () => {
    const r = ApprovalConfigSchema.safeParse({ rules: [{ skill: 'pdf', caller: {}, action: 'allow' }] });
    expect(r.success).toBe(false);
    expect(r.error?.issues[0]).toMatchObject({
      path: ['rules', 0, 'caller'],
      message: 'list at least one subject or group',
    });
  });
});
