import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAuditStore } from '../../src/audit/index.js';
import { gatedCall, gatedCallAsync, startSession } from './helpers/sample-events.js';
import { buildAuditJs } from './helpers/build-audit-js.js';
import { tempDir } from './helpers/temp-dir.js';
import { spawnWriter } from './helpers/writer-process.js';

const WRITERS = 20;
const CALLS = 25;

describe('audit store with concurrent writers', () => {
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

  it(`keeps one consistent chain when ${WRITERS} processes create, migrate and write the same new file`, async () => {
    const runs = Array.from({ length: WRITERS }, () =>
      spawnWriter(['calls', t.dbPath, build.entry, String(CALLS)]),
    );
    const exits = await Promise.all(runs.map((r) => r.closed));
    exits.forEach((exit, i) => expect(exit, runs[i]!.stderr()).toEqual({ code: 0, signal: null }));

    const store = openAuditStore({ path: t.dbPath });
    try {
      // Every writer saw its sessions as live (or already ended): recovery touched nothing.
      expect(store.recovery).toMatchObject({ interruptedCalls: [], closedSessions: [], chain: { ok: true } });
      const stored = [...store.exportEvents()];
      const perSession = 1 + CALLS * 4 + 1;
      expect(stored.length).toBe(WRITERS * perSession);
      const byId = new Map(stored.map((e) => [e.event_id, e]));
      for (const r of runs) {
        const events = r.lines.flatMap((l) => (l.kind === 'event' ? [l] : []));
        expect(events.length).toBe(perSession);
        // Each writer's events are in the chain, unchanged and in the order it wrote them.
        for (const e of events)
          expect(byId.get(e.event_id)).toMatchObject({
            hash: e.hash,
            type: e.type,
            session_id: e.session_id,
          });
        const ids = events.map((e) => e.event_id);
        expect(ids).toEqual([...ids].sort((a, b) => a - b));
      }
      const calls = store.listCalls();
      expect(calls.length).toBe(WRITERS * CALLS);
      expect(calls.every((c) => c.state === 'finished' && c.status === 'ok')).toBe(true);
      const incremental = store.snapshotProjections();
      store.rebuildProjections();
      expect(store.snapshotProjections()).toEqual(incremental);
    } finally {
      store.close();
    }
  }, 120_000);

  it(`keeps one consistent chain when ${WRITERS} async tasks interleave: group commit on one store, sync writes on others`, async () => {
    const path = `${t.dir}/interleaved.db`;
    const shared = openAuditStore({ path });
    const own = Array.from({ length: WRITERS / 2 }, () => openAuditStore({ path }));
    const tick = () => new Promise<void>((resolve) => setImmediate(resolve));
    try {
      const tasks = Array.from({ length: WRITERS }, async (_, i) => {
        const store = i % 2 === 0 ? shared : own[i >> 1]!;
        const s = startSession(store);
        for (let c = 0; c < CALLS; c++) {
          if (i % 2 === 0) await gatedCallAsync(store, s);
          else {
            await tick();
            gatedCall(store, s);
          }
        }
        store.endSession(s, 'client_closed');
        return s;
      });
      const sessions = await Promise.all(tasks);
      expect(shared.verify()).toMatchObject({ ok: true, events: WRITERS * (2 + CALLS * 6) });
      for (const s of sessions) expect(shared.listCalls({ sessionId: s }).length).toBe(CALLS);
      const incremental = shared.snapshotProjections();
      shared.rebuildProjections();
      expect(shared.snapshotProjections()).toEqual(incremental);
    } finally {
      shared.close();
      own.forEach((s) => s.close());
    }
  }, 120_000);
});
