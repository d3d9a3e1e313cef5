import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { servedUrl, spawnCli } from '../http/helpers/spawn-server.js';
import { auditCli, client, stop, TOKEN, verify } from './helpers/anchored-server.js';
import { finished, requested, sha, started } from './helpers/sample-events.js';

/**
 * A writer who can write the audit database but does not hold the anchor key appends a whole approved call through
 * the store's own API (the events link to the chain). The server must not vouch for it: not when it anchors at its
 * next start and stop, and `audit verify` names those events as nobody's, whatever their linkage.
 */
describe('appends no server made (built binary, real sandbox)', () => {
  let fx: ReturnType<typeof gatedFixture>;
  let anchors: string;
  let key: string;
  let fake: { first: number; last: number; callId: string };

  const serveOnce = async (text?: string) => {
    const s = spawnCli(['--http', '--port', '0', ...fx.args], { SKILLS_MCP_TOKEN: TOKEN });
    const url = await servedUrl(s);
    if (text !== undefined) {
      const a = await client(url, ['approved']);
      expect((await a.client.callTool({ name: 'echo', arguments: { text } })).isError).toBeFalsy();
      await a.client.close();
    }
    await stop(s);
  };

  beforeAll(async () => {
    fx = gatedFixture('approval:\n  mode: ask\n');
    anchors = `${fx.auditPath}.anchors`;
    key = join(fx.dir, 'state', 'audit-anchor.key');
    await serveOnce('honest');
    // The forger: the store's API, without the key.
    const store = openAuditStore({ path: fx.auditPath, recover: false });
    try {
      const s = store.startSession({ transport: 'http', server_version: '0.1.0' });
      const req = store.append({
        type: 'tool_call_requested',
        sessionId: s.sessionId,
        payload: requested({
          tool: 'echo',
          skill: 'echo',
          script: 'scripts/main.py',
          approval_key: sha('k'),
        }),
      });
      const callId = req.callId;
      const on = { sessionId: s.sessionId, callId };
      store.append({
        type: 'policy_decided',
        ...on,
        payload: { decision: 'ask', rule: null, risk: { level: 'low', code: 'none', reason: 'no findings' } },
      });
      store.append({
        type: 'approval_requested',
        ...on,
        payload: { approval_key: sha('k'), channel: 'console' },
      });
      store.append({
        type: 'approval_decided',
        ...on,
        payload: { approval_key: sha('k'), decision: 'approved', reason: 'user', channel: 'console' },
      });
      store.append({ type: 'tool_call_started', ...on, payload: started() });
      const last = store.append({ type: 'tool_call_finished', ...on, payload: finished() });
      fake = { first: s.eventId, last: last.eventId, callId };
    } finally {
      store.close();
    }
  }, 90_000);
  afterAll(() => fx.cleanup());

  it('names the forged events as not vouched for at once, though they link to the chain', () => {
    const r = verify(fx.auditPath, anchors, key);
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/chain: ok/);
    expect(r.err).toContain(`writers: 7 events NOT VOUCHED FOR: ${fake.first}-${fake.last}`);
    expect(r.err).toMatch(/FAILED: the audit log does not verify\n$/);
  });

  it('still names them after the server started and stopped again: its anchors do not sign what it did not write', async () => {
    await serveOnce();
    await serveOnce('after');
    const r = verify(fx.auditPath, anchors, key);
    expect(r.code).toBe(1);
    expect(r.out).toBe('');
    expect(r.err).toMatch(/anchors: ok, \d+ match/);
    // The fake session was left open: the next start closed it (session_ended, written and marked by the server).
    expect(r.err).toContain(`writers: 7 events NOT VOUCHED FOR: ${fake.first}-${fake.last}`);
    const json = JSON.parse(auditCli(fx.auditPath, 'verify', '--json').out) as {
      ok: boolean;
      writers: { unvouched: [number, number][] };
    };
    expect(json.ok).toBe(false);
    expect(json.writers.unvouched).toEqual([[fake.first, fake.last]]);
  }, 90_000);
});
