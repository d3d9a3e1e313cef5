import { describe, expect, it } from 'vitest';
import { MAX_AUDIT_KEYS, auditKeyName, auditKeyNames, auditPath } from '../../src/audit/model-text.js';

const DIGEST = /^#[0-9a-f]{32}$/;

describe('model-chosen text in the audit log', () => {
  it.each([
    ['text', 'text'],
    ['AWS_REGION', 'AWS_REGION'],
    ['_private-name', '_private-name'],
  ])('keeps the plain key name %s', (key, kept) => expect(auditKeyName(key)).toBe(kept));

  it.each([
    ['a secret after "="', 'AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY'],
    ['a token-length identifier', 'ghp_0123456789abcdefghijklmnopqrstuvwxyzAB'],
    ['a newline', 'a\nb'],
    ['an escape sequence', '\u001b[31mred'],
    ['a 200-character name', 'k'.repeat(200)],
    ['an empty name', ''],
  ])('stores %s as a digest', (_, key) => {
    expect(auditKeyName(key)).toMatch(DIGEST);
    expect(auditKeyName(auditKeyName(key))).toBe(auditKeyName(key));
  });

  it('keeps the first 64 names and counts the rest', () => {
    const keys = Array.from({ length: 300 }, (_, i) => `k${String(i).padStart(3, '0')}${'x'.repeat(120)}`);
    const { kept, omitted } = auditKeyNames([...keys, 'plain']);
    expect(kept).toHaveLength(MAX_AUDIT_KEYS);
    expect(omitted).toBe(301 - MAX_AUDIT_KEYS);
    expect(auditKeyNames(kept, omitted)).toEqual({ kept, omitted });
  });

  it.each([
    ['scripts/main.py', true],
    ['scripts/my tool.sh', true],
    ['scripts/x\nFORGED  row', false],
    ['../escape.py', false],
    ['/etc/passwd', false],
    [`scripts/${'a'.repeat(300)}.py`, false],
  ])('keeps the script path %j only when plain', (path, plain) => {
    expect(auditPath(path) === path).toBe(plain);
    if (!plain) expect(auditPath(path)).toMatch(DIGEST);
  });
});
