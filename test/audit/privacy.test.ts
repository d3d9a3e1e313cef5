import { readFileSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { assertPrivate, openAuditStore, type AppendInput, type AuditStore } from '../../src/audit/index.js';
import { finished, requested, sha, startSession, started } from './helpers/sample-events.js';
import { tempDir } from './helpers/temp-dir.js';

const CANARY = 'CANARY-7f3e-secret-value';

describe('audit privacy guard', () => {
  let t: ReturnType<typeof tempDir>;
  let store: AuditStore;
  let s: string;
  let callId: string;
  beforeEach(() => {
    t = tempDir();
    store = openAuditStore({ path: t.dbPath });
    s = startSession(store);
    callId = store.append({ type: 'tool_call_requested', sessionId: s, payload: requested() }).callId;
  });
  afterEach(() => {
    store.close();
    t.cleanup();
  });

  // Each of these is a plausible mistake: a raw value where only a hash, size or key name belongs.
  const leaks: [string, () => AppendInput][] = [
    [
      'an extra input field',
      () => ({
        type: 'tool_call_requested',
        sessionId: s,
        payload: { ...requested(), input: { q: CANARY } } as never,
      }),
    ],
    [
      'a value in place of a hash',
      () => ({ type: 'tool_call_requested', sessionId: s, payload: requested({ input_sha256: CANARY }) }),
    ],
    [
      'env values in sandbox evidence',
      () => ({
        type: 'tool_call_started',
        sessionId: s,
        callId,
        payload: started({ sandbox: { env: { API_KEY: CANARY } } }),
      }),
    ],
    [
      'a token in sandbox evidence',
      () => ({
        type: 'tool_call_started',
        sessionId: s,
        callId,
        payload: started({ sandbox: { auth_token: CANARY } }),
      }),
    ],
    [
      'an argument value in argv',
      () => ({
        type: 'tool_call_started',
        sessionId: s,
        callId,
        payload: started({ argv: ['python3', 'scripts/x.py', `--key ${CANARY}`] }),
      }),
    ],
    [
      'an absolute path in argv',
      () => ({
        type: 'tool_call_started',
        sessionId: s,
        callId,
        payload: started({ argv: [`/home/u/${CANARY}`] }),
      }),
    ],
    [
      'stdout text',
      () => ({
        type: 'tool_call_finished',
        sessionId: s,
        callId,
        payload: { ...finished(), stdout: CANARY } as never,
      }),
    ],
    [
      'an artifact path leaving its folder',
      () => ({
        type: 'tool_call_finished',
        sessionId: s,
        callId,
        payload: finished({ artifacts: [{ path: `../${CANARY}`, sha256: sha('x'), bytes: 1 }] }),
      }),
    ],
    [
      'an error message',
      () => ({
        type: 'session_error',
        sessionId: s,
        payload: { code: 'INTERNAL', ref: null, message: CANARY } as never,
      }),
    ],
  ];

  it.each(leaks)('refuses %s and writes nothing', (_name, make) => {
    expect(() => store.append(make())).toThrow(expect.objectContaining({ code: 'AUDIT_FAILED' }));
  });

  it('leaves no trace of refused values in the database files', () => {
    for (const [, make] of leaks) expect(() => store.append(make())).toThrow();
    store.close();
    const dir = dirname(t.dbPath);
    for (const f of readdirSync(dir)) expect(readFileSync(join(dir, f)).includes(CANARY)).toBe(false);
  });

  it('lets hashes, sizes and key names through under value-like names', () => {
    expect(() =>
      assertPrivate({ env_keys: ['API_KEY'], input_sha256: sha('x'), input: sha('x'), secret: null }),
    ).not.toThrow();
    expect(() => assertPrivate({ nested: [{ password: 'hunter2' }] })).toThrow(
      /payload\.nested\[0\]\.password/,
    );
  });
});
