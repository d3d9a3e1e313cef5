import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import { newCallId, shortCallId } from '../../src/audit/call-id.js';
import { openAuditStore } from '../../src/audit/index.js';
import { requested, startSession } from './helpers/sample-events.js';
import { tempDir } from './helpers/temp-dir.js';

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const timeOf = (id: string) => parseInt(id.replaceAll('-', '').slice(0, 12), 16);

describe('call ids', () => {
  let t: ReturnType<typeof tempDir> | undefined;
  afterEach(() => t?.cleanup());

  it('are version 7 uuids that carry the time they were made in their first 48 bits', () => {
    const before = Date.now();
    const id = newCallId();
    expect(id).toMatch(UUID_V7);
    expect(timeOf(id)).toBeGreaterThanOrEqual(before);
    expect(timeOf(id)).toBeLessThanOrEqual(Date.now());
    expect(timeOf(newCallId(0x0123_4567_89ab))).toBe(0x0123_4567_89ab);
  });

  it('sort after every id made earlier, across hex digit boundaries', () => {
    const times = [
      0,
      1,
      0xf,
      0x10,
      0xfff,
      0x1000,
      2 ** 40,
      1_700_000_000_000,
      1_700_000_000_001,
      2 ** 48 - 1,
    ];
    const ids = times.map((ms) => newCallId(ms));
    expect([...ids].sort()).toEqual(ids);
    for (const id of ids) expect(id).toMatch(UUID_V7);
  });

  it('made in the same millisecond are distinct, and so are their short forms', () => {
    const ids = Array.from({ length: 2000 }, () => newCallId(1_700_000_000_000));
    expect(new Set(ids).size).toBe(ids.length);
    expect(new Set(ids.slice(0, 100).map(shortCallId)).size).toBe(100);
    expect(ids.every((id) => id.startsWith('018bcfe5'))).toBe(true);
  });

  it('show in lists by their random end', () => {
    expect(shortCallId('0190f3c2-7d1e-7a2b-9c3d-4e5f60718293')).toBe('60718293');
    expect(shortCallId('ro-call')).toBe('ro-call');
  });

  it('made by the audit log grow with the order of its calls; its session ids stay random', () => {
    t = tempDir();
    let clock = 1_700_000_000_000;
    const store = openAuditStore({ path: t.dbPath, now: () => clock });
    const session = startSession(store);
    expect(session).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-/);
    for (let i = 0; i < 40; i++) {
      // The id follows the wall clock, not the store's: calls a few ms apart, as a client makes them.
      const until = Date.now() + (i % 4 === 0 ? 2 : 0);
      while (Date.now() < until);
      store.append({ type: 'tool_call_requested', sessionId: session, payload: requested() });
      clock++;
    }
    store.close();
    const db = new Database(t.dbPath, { readonly: true });
    const ids = (
      db.prepare('SELECT call_id FROM calls ORDER BY requested_event_id').all() as { call_id: string }[]
    ).map((r) => r.call_id);
    db.close();
    expect(ids).toHaveLength(40);
    for (const id of ids) expect(id).toMatch(UUID_V7);
    expect(new Set(ids.map((id) => timeOf(id))).size).toBeGreaterThan(1);
    // Within one millisecond the random bits decide the order; across milliseconds the time does.
    for (let i = 1; i < ids.length; i++)
      if (timeOf(ids[i]!) !== timeOf(ids[i - 1]!)) expect(ids[i]! > ids[i - 1]!).toBe(true);
  });
});
