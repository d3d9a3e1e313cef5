import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { newCallId } from '../../src/audit/call-id.js';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import { gatedFixture, type GatedFixture } from '../helpers/gated-fixture.js';
import { approveEvery } from '../helpers/gated-server.js';
import { connectStdio, type Connected } from '../helpers/stdio-client.js';

const EVENTS = 20_000;

/** A log of `events` events (read-only calls of one ended session), written through the store in a few commits. */
function writeLongLog(path: string, events: number): void {
  const store = openAuditStore({ path });
  try {
    const { sessionId } = store.startSession({ transport: 'stdio', server_version: '0.0.0' });
    const calls = Math.floor((events - 2) / 2);
    for (let i = 0; i < calls; i += 1000) {
      store.withWriteLock(() => {
        for (let j = i; j < Math.min(calls, i + 1000); j++) {
          const callId = newCallId();
          store.appendMany([
            {
              type: 'tool_call_requested',
              sessionId,
              callId,
              payload: {
                tool: 'read_skill_file',
                skill: 'echo',
                input_sha256: 'a'.repeat(64),
                input_bytes: 2,
                input_keys: [],
                bundle_sha256: null,
                approval_key: null,
                valid: true,
                read_only: true,
              },
            },
            {
              type: 'tool_call_finished',
              sessionId,
              callId,
              payload: {
                status: 'ok',
                exit_code: null,
                duration_ms: 0,
                stdout_sha256: null,
                stdout_bytes: 0,
                stderr_bytes: 0,
                artifacts: [],
              },
            },
          ]);
        }
      });
    }
    store.endSession(sessionId, 'client_closed');
  } finally {
    store.close();
  }
}

describe('read-only calls answered just after a start on a long log (built binary)', () => {
  let fx: GatedFixture | undefined;
  let c: Connected | undefined;
  afterEach(async () => {
    await c?.close().catch(() => undefined);
    fx?.cleanup();
    fx = c = undefined;
  });

  it('has recorded every call it answered when killed right after the first answer', async () => {
    fx = gatedFixture('approval:\n  mode: ask\n');
    writeLongLog(fx.auditPath, EVENTS);
    const before = openAuditStore({ path: fx.auditPath, readOnly: true });
    const had = before.listCalls().length;
    before.close();

    c = await connectStdio({
      era: 'legacy',
      args: ['--skills', fx.skills, '--no-watch'],
      env: { SKILLS_MCP_AUDIT: fx.auditPath },
    });
    const pid = c.transport.pid!;
    let answered = 0;
    let killed = false;
    const calls = Array.from({ length: 8 }, (_, i) =>
      c!.client
        .callTool({
          name: 'read_skill_file',
          arguments: { skill: 'echo', path: 'SKILL.md', note: String(i) },
        })
        .then(
          (r) => {
            expect(r.isError).toBeFalsy();
            answered++;
            // Killed at the first answer: whatever the client was answered by then must be in the log.
            if (killed) return;
            killed = true;
            process.kill(pid, 'SIGKILL');
          },
          () => undefined,
        ),
    );
    await Promise.all(calls);
    expect(answered).toBeGreaterThanOrEqual(1);

    const after = openAuditStore({ path: fx.auditPath });
    try {
      expect(after.verify()).toMatchObject({ ok: true });
      const recorded = after
        .listCalls()
        .slice(had)
        .filter((r) => r.tool === 'read_skill_file' && r.status === 'ok');
      expect(recorded.length).toBeGreaterThanOrEqual(answered);
    } finally {
      after.close();
    }
  }, 120_000);

  it('runs nothing on a long log edited in place, though its check ends after the server answers', async () => {
    fx = gatedFixture('approval:\n  mode: ask\n');
    writeLongLog(fx.auditPath, EVENTS);
    const db = new Database(fx.auditPath);
    db.exec(
      'DROP TRIGGER events_no_update; UPDATE events SET payload = replace(payload, \'"status":"ok"\', \'"status":"error"\') WHERE event_id = 3',
    );
    db.close();
    c = await connectStdio({
      era: 'legacy',
      args: ['--skills', fx.skills, '--no-watch'],
      env: { SKILLS_MCP_AUDIT: fx.auditPath },
      capabilities: { elicitation: { form: {} } },
    });
    approveEvery(c);
    // The first call of the start: it waits for the whole chain check, which finds event 3.
    const run = await c.client.callTool({ name: 'echo', arguments: { text: 'first' } });
    expect(run.isError).toBe(true);
    expect(JSON.stringify(run.content)).toContain(
      'the audit log failed verification (chain broken at event 3',
    );
    const read = await c.client.callTool({
      name: 'read_skill_file',
      arguments: { skill: 'echo', path: 'SKILL.md' },
    });
    expect(read.isError).toBeFalsy();
    await c.close();
    expect(c.stderr()).toContain('audit chain does not verify');
  }, 120_000);
});
