import { describe, expect, it } from 'vitest';
import { approvalKey, inputSha256, sha256Hex } from '../../src/gate/approval-key.js';
import { bindSkillCall, SKILL_CALL_TOOL, type SkillCall } from '../../src/gate/bind-skill-call.js';

const bundle = 'a'.repeat(64);
const call: SkillCall = {
  skill: 'pdf',
  folder: '/skills/pdf',
  script: 'scripts/fill.py',
  bundleSha256: bundle,
  input: { path: 'in.pdf', note: 'please fill it' },
  args: ['--fast'],
};

describe('bindSkillCall', () => {
  it('exact: binds skill, script, bundle, input and args', () => {
    const bound = bindSkillCall(call, 'exact');
    expect(bound.tool).toBe(SKILL_CALL_TOOL);
    expect(bound.request).toEqual({
      skill: 'pdf',
      folder: '/skills/pdf',
      script: 'scripts/fill.py',
      bundle_sha256: bundle,
      granularity: 'exact',
      input_sha256: inputSha256(call.input),
      args_sha256: sha256Hex('["--fast"]'),
    });
    expect(bound.approvalKey).toBe(approvalKey(SKILL_CALL_TOOL, bound.request));
    expect(bound.input.input_keys).toEqual(['note', 'path']);
  });

  it('skill: binds skill, script and bundle only', () => {
    const bound = bindSkillCall(call, 'skill');
    expect(bound.request).toEqual({
      skill: 'pdf',
      folder: '/skills/pdf',
      script: 'scripts/fill.py',
      bundle_sha256: bundle,
      granularity: 'skill',
    });
  });

  const variants: [string, Partial<SkillCall>, { exact: boolean; skill: boolean }][] = [
    [
      'free text in the input',
      { input: { path: 'in.pdf', note: 'PLEASE, it is urgent' } },
      { exact: true, skill: false },
    ],
    ['the args', { args: ['--slow'] }, { exact: true, skill: false }],
    ['removing the args', { args: [] }, { exact: true, skill: false }],
    ['the bundle', { bundleSha256: 'b'.repeat(64) }, { exact: true, skill: true }],
    ['the script', { script: 'scripts/other.py' }, { exact: true, skill: true }],
    ['the skill', { skill: 'docx' }, { exact: true, skill: true }],
    [
      'the folder claiming the name, same content',
      { folder: '/other-root/pdf' },
      { exact: true, skill: true },
    ],
    [
      'input key order only',
      { input: { note: 'please fill it', path: 'in.pdf' } },
      { exact: false, skill: false },
    ],
  ];
  it.each(variants)('changing %s makes a new key: %o', (_name, change, expected) => {
    for (const g of ['exact', 'skill'] as const) {
      const changed =
        bindSkillCall({ ...call, ...change }, g).approvalKey !== bindSkillCall(call, g).approvalKey;
      expect({ g, changed }).toEqual({ g, changed: expected[g] });
    }
  });

  it('binds absent args like empty args', () => {
    const { args: _args, ...noArgs } = call;
    expect(bindSkillCall(noArgs, 'exact').approvalKey).toBe(
      bindSkillCall({ ...call, args: [] }, 'exact').approvalKey,
    );
  });

  it('exact and skill keys never collide', () => {
    expect(bindSkillCall(call, 'exact').approvalKey).not.toBe(bindSkillCall(call, 'skill').approvalKey);
  });

  it.each([
    ['a short bundle hash', { bundleSha256: 'abc' }],
    ['an uppercase bundle hash', { bundleSha256: 'A'.repeat(64) }],
    ['an empty script', { script: '' }],
    ['an empty folder', { folder: '' }],
    ['NaN in the input', { input: { x: Number.NaN } }],
  ])('refuses %s with KEY_INVALID', (_name, change) => {
    expect(() => bindSkillCall({ ...call, ...change }, 'exact')).toThrow(
      expect.objectContaining({ code: 'KEY_INVALID' }),
    );
  });
});
