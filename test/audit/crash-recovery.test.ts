import { randomInt } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAuditStore } from '../../src/audit/index.js';
import { buildAuditJs } from './helpers/build-audit-js.js';
import { tempDir } from './helpers/temp-dir.js';
import { type WriterLine, spawnWriter } from './helpers/writer-process.js';
import { trials } from '../helpers/trials.js';

const TRIALS = trials(50);

describe('audit store killed with SIGKILL', () => {
  let build: ReturnType<typeof buildAuditJs>;
  let t: ReturnType<typeof tempDir>;
  beforeAll(() => {
    build = buildAuditJs();
    t = tempDir();
  });
  afterAll(() => {
    build.cleanup();
    t.cleanup();
  });

  it(`interrupts the running call at every restart, losing and duplicating nothing (${TRIALS} trials)`, async () => {
    const committed = new Map<number, WriterLine & { kind: 'event' }>();
    const victims: string[] = [];
    const sessions: string[] = [];

    for (let trial = 0; trial < TRIALS; trial++) {
      // Kill after a random number of further commits, then a random sub-millisecond-to-2ms pause:
      // the kill lands anywhere, often inside a transaction or its fsync.
      const killAfter = randomInt(0, 30);
      const pauseMs = randomInt(0, 3);
      let seen = -1;
      const run = spawnWriter(['crash', t.dbPath, build.entry], (line, r) => {
        if (line.kind === 'victim') seen = 0;
        else if (line.kind === 'event' && seen >= 0) seen++;
        if (seen === killAfter) {
          seen = Number.NEGATIVE_INFINITY;
          setTimeout(() => r.child.kill('SIGKILL'), pauseMs);
        }
      });
      const exit = await run.closed;
      const context = `trial ${trial} (killAfter ${killAfter}, pause ${pauseMs}ms): ${run.stderr()}`;
      expect(exit.signal, context).toBe('SIGKILL');

      const recovery = run.lines.find((l) => l.kind === 'recovery');
      expect(recovery, context).toBeDefined();
      if (trial > 0) {
        // This start is the restart after the previous kill.
        expect(recovery!.report, context).toMatchObject({
          interruptedCalls: expect.arrayContaining([
            { callId: victims.at(-1), sessionId: sessions.at(-1), stage: 'started' },
          ]),
          closedSessions: [sessions.at(-1)],
          chain: { ok: true },
        });
      }
      for (const l of run.lines) {
        if (l.kind !== 'event') continue;
        expect(committed.has(l.event_id), `event ${l.event_id} reported twice; ${context}`).toBe(false);
        committed.set(l.event_id, l);
        if (l.type === 'session_started') sessions.push(l.session_id);
      }
      const victim = run.lines.find((l) => l.kind === 'victim');
      expect(victim, context).toBeDefined();
      victims.push((victim as { call_id: string }).call_id);
    }

    // The final restart, in this process.
    const store = openAuditStore({ path: t.dbPath });
    try {
      expect(store.recovery).toMatchObject({
        interruptedCalls: expect.arrayContaining([
          { callId: victims.at(-1), sessionId: sessions.at(-1), stage: 'started' },
        ]),
        closedSessions: [sessions.at(-1)],
        chain: { ok: true },
      });
      expect(store.verify()).toMatchObject({ ok: true });

      // Nothing lost: every event a writer saw committed is there, unchanged.
      const stored = new Map([...store.exportEvents()].map((e) => [e.event_id, e]));
      for (const [id, e] of committed)
        expect(stored.get(id)).toMatchObject({ hash: e.hash, type: e.type, call_id: e.call_id });

      // Nothing duplicated: one request and one terminal event per call, at most one start.
      const perCall = new Map<string, string[]>();
      for (const e of stored.values())
        if (e.call_id) perCall.set(e.call_id, [...(perCall.get(e.call_id) ?? []), e.type]);
      for (const [callId, types] of perCall) {
        const n = (type: string) => types.filter((x) => x === type).length;
        expect(n('tool_call_requested'), callId).toBe(1);
        expect(n('tool_call_started'), callId).toBeLessThanOrEqual(1);
        expect(n('tool_call_finished') + n('tool_call_interrupted'), callId).toBe(1);
        expect(types.at(-1), callId).toMatch(/^tool_call_(finished|interrupted)$/);
      }
      for (const v of victims) {
        expect(store.getCall(v)?.events.at(-1)).toMatchObject({
          type: 'tool_call_interrupted',
          payload: { reason: 'server_restart', stage: 'started' },
        });
      }
      for (const s of sessions) expect(store.sessionState(s)).toMatchObject({ exists: true, open: false });
      expect(sessions.length).toBe(TRIALS);

      const incremental = store.snapshotProjections();
      store.rebuildProjections();
      expect(store.snapshotProjections()).toEqual(incremental);
    } finally {
      store.close();
    }
  }, 300_000);
});
