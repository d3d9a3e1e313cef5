import { describe, expect, it } from 'vitest';
import {
  approvalKey,
  canonicalRequest,
  envKeys,
  inputSha256,
  sha256Hex,
  summarizeInput,
} from '../../src/gate/approval-key.js';
import { SkillsError } from '../../src/errors.js';

const vectors = [
  {
    tool: 'file_write',
    request: {
      path: 'out.txt',
      bytes: 5,
      create_dirs: true,
      content_sha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
      sandbox_permissions: null,
    },
    canonical:
      '{"request":{"bytes":5,"content_sha256":"2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824","create_dirs":true,"path":"out.txt","sandbox_permissions":null},"tool":"file_write"}',
    key: '26d63b5f8cd0c0941302c2ef868ad7107d2b0f18d2efc322e27ac0ad22c0b88c',
  },
  {
    tool: 'shell_exec',
    request: {
      tty: false,
      timeout_ms: null,
      sandbox_permissions: null,
      sandbox: null,
      risk: { risk_level: 'low', reason: '未命中高危模式（Phase 2 最小规则）' },
      env_keys: ['OPENAI_API_KEY'],
      cwd: '.',
      argv: ['pytest', '-q'],
    },
    canonical:
      '{"request":{"argv":["pytest","-q"],"cwd":".","env_keys":["OPENAI_API_KEY"],"risk":{"reason":"未命中高危模式（Phase 2 最小规则）","risk_level":"low"},"sandbox":null,"sandbox_permissions":null,"timeout_ms":null,"tty":false},"tool":"shell_exec"}',
    key: '76f2ec60970c40d6a78e3ff843e23453f4c8c58b1a58c94bbefae79370dfcd59',
  },
  {
    tool: 't',
    request: { z: [], q: 'héllo', n: -7, a: { b: null } },
    canonical: '{"request":{"a":{"b":null},"n":-7,"q":"héllo","z":[]},"tool":"t"}',
    key: 'e0425125ca5ab610eec6b7384c81e7670b78304678f22e84ab6a00919d4a6116',
  },
];

describe('approvalKey', () => {
  it.each(vectors)('matches the reference vector for $tool', ({ tool, request, canonical, key }) => {
    expect(canonicalRequest(tool, request)).toBe(canonical);
    expect(approvalKey(tool, request)).toBe(key);
    expect(sha256Hex(canonical)).toBe(key);
  });

  it('gives lowercase hex of 64 digits', () => {
    expect(approvalKey('t', {})).toMatch(/^[0-9a-f]{64}$/);
  });

  it.each([
    ['a float', { x: 1.5 }],
    ['NaN', { x: Number.NaN }],
    ['+Infinity', { x: Number.POSITIVE_INFINITY }],
    ['-Infinity', { x: Number.NEGATIVE_INFINITY }],
    ['-0', { x: -0 }],
    ['a lone high surrogate', { x: 'a\uD800b' }],
    ['a lone low surrogate', { x: '\uDC00' }],
    ['a lone surrogate in a key', { ['k\uD83D']: 1 }],
    ['a float deep in an array', { x: [1, [2, { y: 0.1 }]] }],
    ['an unsafe integer', { x: 2 ** 53 }],
    ['a bigint', { x: 1n }],
    ['a Date', { x: new Date(0) }],
  ])('rejects %s with KEY_INVALID (fail closed)', (_name, request) => {
    let error: unknown;
    try {
      approvalKey('t', request);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SkillsError);
    expect((error as SkillsError).code).toBe('KEY_INVALID');
  });

  it('accepts a surrogate pair (astral character)', () => {
    expect(canonicalRequest('t', { x: '😀' })).toBe('{"request":{"x":"😀"},"tool":"t"}');
  });
});

describe('summarizeInput', () => {
  it('keeps a digest, the byte size and sorted top-level keys, never the values', () => {
    const input = { zeta: 'secret-value-123', alpha: { nested: 'é' } };
    const s = summarizeInput(input);
    const canonical = '{"alpha":{"nested":"é"},"zeta":"secret-value-123"}';
    expect(s).toEqual({
      input_sha256: sha256Hex(canonical),
      input_bytes: Buffer.byteLength(canonical),
      input_keys: ['alpha', 'zeta'],
    });
    expect(JSON.stringify(s)).not.toContain('secret-value-123');
  });

  it.each([
    ['no input', undefined, 'null', []],
    ['null', null, 'null', []],
    ['an array', [1, 'a'], '[1,"a"]', []],
    ['a string', 'hi', '"hi"', []],
  ])('binds %s', (_name, input, canonical, keys) => {
    expect(summarizeInput(input)).toEqual({
      input_sha256: sha256Hex(canonical),
      input_bytes: Buffer.byteLength(canonical),
      input_keys: keys,
    });
    expect(inputSha256(input)).toBe(sha256Hex(canonical));
  });

  it('does not depend on key order', () => {
    expect(inputSha256({ a: 1, b: 2 })).toBe(inputSha256({ b: 2, a: 1 }));
  });

  it('hashes an input holding a float in RFC 8785 number form, and still refuses NaN and -0', () => {
    expect(inputSha256({ threshold: 0.5 })).toBe(inputSha256(JSON.parse('{"threshold":5e-1}')));
    expect(inputSha256({ threshold: 0.5 })).not.toBe(inputSha256({ threshold: 0.25 }));
    expect(() => inputSha256({ x: Number.NaN })).toThrow(/NaN/);
    expect(() => inputSha256({ x: -0 })).toThrow(/-0/);
  });
});

describe('envKeys', () => {
  it('sorts by code unit and drops duplicates', () => {
    expect(envKeys(['b', 'B', 'a', 'b', '_x'])).toEqual(['B', '_x', 'a', 'b']);
  });
});
