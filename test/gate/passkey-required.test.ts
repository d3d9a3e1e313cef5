import { describe, expect, it } from 'vitest';
import { ApprovalConfigSchema } from '../../src/config/approval-schema.js';
import { isFourEyesRequired } from '../../src/gate/four-eyes-required.js';
import { isPasskeyRequired } from '../../src/gate/passkey-required.js';

const requireOf = (require: unknown) => ApprovalConfigSchema.parse({ require }).require;

describe('which calls approval.require asks a passkey for', () => {
  it('asks none by default', () => {
    const { require } = ApprovalConfigSchema.parse({});
    expect(require).toBe('none');
    expect(isPasskeyRequired(require, { skill: 'pdf', risk: 'high' })).toBe(false);
  });

  it('asks every call with passkey', () => {
    for (const risk of ['low', 'medium', 'high'] as const)
      expect(isPasskeyRequired(requireOf('passkey'), { skill: 'anything', risk })).toBe(true);
  });

  it('asks the listed skills, by name or pattern, whatever their risk', () => {
    const r = requireOf({ passkey: { skills: ['deploy', 'data-*'] } });
    expect(isPasskeyRequired(r, { skill: 'deploy', risk: 'low' })).toBe(true);
    expect(isPasskeyRequired(r, { skill: 'data-export', risk: 'low' })).toBe(true);
    expect(isPasskeyRequired(r, { skill: 'deployer', risk: 'high' })).toBe(false);
    expect(isPasskeyRequired(r, { skill: 'pdf', risk: 'medium' })).toBe(false);
  });

  it('asks the calls rated at a listed risk level', () => {
    const r = requireOf({ passkey: { risk: ['high'] } });
    expect(isPasskeyRequired(r, { skill: 'pdf', risk: 'high' })).toBe(true);
    expect(isPasskeyRequired(r, { skill: 'pdf', risk: 'medium' })).toBe(false);
  });

  it('asks a call that matches either the skills or the risk levels', () => {
    const r = requireOf({ passkey: { skills: ['deploy'], risk: ['medium', 'high'] } });
    expect(isPasskeyRequired(r, { skill: 'deploy', risk: 'low' })).toBe(true);
    expect(isPasskeyRequired(r, { skill: 'pdf', risk: 'medium' })).toBe(true);
    expect(isPasskeyRequired(r, { skill: 'pdf', risk: 'low' })).toBe(false);
  });

  it('rejects a scope that lists nothing, and an unknown word', () => {
    expect(ApprovalConfigSchema.safeParse({ require: { passkey: {} } }).success).toBe(false);
    expect(ApprovalConfigSchema.safeParse({ require: 'yubikey' }).success).toBe(false);
    expect(ApprovalConfigSchema.safeParse({ require: { passkey: { risk: ['extreme'] } } }).success).toBe(
      false,
    );
  });

  it('asks a passkey for the skills four_eyes lists, alone or beside a passkey scope', () => {
    const alone = requireOf({ four_eyes: { skills: ['deploy'] } });
    expect(isPasskeyRequired(alone, { skill: 'deploy', risk: 'low' })).toBe(true);
    expect(isPasskeyRequired(alone, { skill: 'pdf', risk: 'high' })).toBe(false);
    const both = requireOf({ passkey: { risk: ['high'] }, four_eyes: { skills: ['deploy'] } });
    expect(isPasskeyRequired(both, { skill: 'deploy', risk: 'low' })).toBe(true);
    expect(isPasskeyRequired(both, { skill: 'pdf', risk: 'high' })).toBe(true);
    expect(isPasskeyRequired(both, { skill: 'pdf', risk: 'low' })).toBe(false);
  });

  it('asks four eyes only for the skills four_eyes lists, by name or pattern', () => {
    const r = requireOf({ passkey: { risk: ['high'] }, four_eyes: { skills: ['prod-*'] } });
    expect(isFourEyesRequired(r, 'prod-deploy')).toBe(true);
    expect(isFourEyesRequired(r, 'pdf')).toBe(false);
    expect(isFourEyesRequired(requireOf('passkey'), 'prod-deploy')).toBe(false);
    expect(isFourEyesRequired(requireOf('none'), 'prod-deploy')).toBe(false);
  });

  it('rejects a four_eyes scope without skills, and an object naming neither scope', () => {
    expect(ApprovalConfigSchema.safeParse({ require: { four_eyes: { skills: [] } } }).success).toBe(false);
    expect(ApprovalConfigSchema.safeParse({ require: { four_eyes: { risk: ['high'] } } }).success).toBe(
      false,
    );
    expect(ApprovalConfigSchema.safeParse({ require: {} }).success).toBe(false);
  });
});
