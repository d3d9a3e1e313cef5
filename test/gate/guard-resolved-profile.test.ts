import { describe, expect, it } from 'vitest';
import { assessRisk } from '../../src/gate/guard.js';
import type { SkillRequests } from '../../src/skills/types.js';

const none: SkillRequests = { network: false, workspace: 'read', env: [] };
const profile = (over: Partial<{ name: string; network: 'none' | 'full'; sandbox: 'required' | 'off' }>) => ({
  name: 'default',
  network: 'none' as const,
  sandbox: 'required' as const,
  ...over,
});

describe('the guard rates what the resolved sandbox profile gives, whatever it is called', () => {
  it('rates a profile with sandbox: off as running without a sandbox under any name', () => {
    const r = assessRisk({
      skill: { requests: none },
      profile: profile({ name: 'trusted', sandbox: 'off' }),
    });
    expect(r.level).toBe('medium');
    expect(r.code).toBe('runs-without-sandbox');
  });

  it('rates a profile with network: full as network access for a skill that asks for none', () => {
    const r = assessRisk({ skill: { requests: none }, profile: profile({ name: 'web', network: 'full' }) });
    expect(r).toMatchObject({
      level: 'medium',
      code: 'requests-network',
      reason: 'has network access (its sandbox profile web has the network)',
    });
  });

  it('keeps a plain profile low, and the operator’s network: none over the profile’s network', () => {
    expect(assessRisk({ skill: { requests: none }, profile: profile({}) }).level).toBe('low');
    const narrowed = assessRisk({
      skill: { requests: none, operator: { network: 'none' } },
      profile: profile({ network: 'full' }),
    });
    expect(narrowed.level).toBe('low');
  });
});
