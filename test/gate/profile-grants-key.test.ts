import { describe, expect, it } from 'vitest';
import { bindSkillCall, type SkillCall } from '../../src/gate/bind-skill-call.js';

const call: SkillCall = {
  skill: 'docx',
  folder: '/skills/docx',
  script: 'scripts/pack.py',
  bundleSha256: 'a'.repeat(64),
  input: {},
};

describe('what a sandbox profile gives beyond the asks is bound into the approval key', () => {
  it('gives another key for the host network or no sandbox from the profile, the same key for none', () => {
    for (const granularity of ['exact', 'skill'] as const) {
      const plain = bindSkillCall(call, granularity).approvalKey;
      const net = bindSkillCall({ ...call, profileGrants: { network: 'full' } }, granularity).approvalKey;
      const off = bindSkillCall({ ...call, profileGrants: { sandbox: 'off' } }, granularity).approvalKey;
      expect(new Set([plain, net, off]).size).toBe(3);
      expect(bindSkillCall({ ...call, profileGrants: {} }, granularity).approvalKey).toBe(plain);
    }
  });
});
