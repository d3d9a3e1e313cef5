import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTeam, textOf, tool, TOKEN, type Raw, type Team } from './helpers/team.js';

// Two replicas on one PostgreSQL log, the default lease (10 s heartbeat, 30 s lease). Clients of one token call a
// read-only tool as fast as they are answered, on both replicas, while others call an allowed gated tool: every
// gated call runs (the read-only records wait in their own bounded queue, never in front of a run's lease, gate
// reads or records). Then PostgreSQL stops for 10 s under the same load: once it is back, gated calls run within
// 2 s. Afterwards no read-only call has only half of its record in the log.
const CONFIG =
  'approval:\n  mode: ask\n  rules:\n    - { skill: echo, script: scripts/main.py, action: allow }\n';

let team: Team;
const replicas: { url: string; c: Client }[] = [];

beforeAll(async () => {
  team = await startTeam(CONFIG);
  for (const name of ['a', 'b']) {
    const { url, c } = await team.start(name);
    replicas.push({ url, c });
  }
}, 60_000);
afterAll(() => team?.cleanup(), 60_000);

/** Calls a read-only tool, one call after another, until `stop()`; counts the answers. */
async function readLoop(c: Client, stop: () => boolean, count: { n: number; errors: number }) {
  while (!stop()) {
    const r = (await tool(c, 'read_skill_file', { skill: 'echo', path: 'SKILL.md' }).catch(() => ({
      isError: true,
    }))) as Raw;
    if (r.isError === true) count.errors++;
    else count.n++;
  }
}

const gated = async (c: Client) => {
  const t = performance.now();
  const r = await tool(c, 'echo', { text: 'gated' }).catch((e: unknown): Raw => ({
    isError: true,
    content: [{ text: String(e) }],
  }));
  return { ok: r.isError !== true, ms: performance.now() - t, text: textOf(r) };
};

const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.ceil((xs.length * q) / 100) - 1]!;

describe('two replicas under read-only load (PostgreSQL log)', () => {
  it('runs every gated call, and runs them again within 2 s of a 10 s outage; no read-only call is half recorded', async () => {
    // Warm: each replica has probed its sandbox and started its session.
    for (const { c } of replicas) expect((await gated(c)).text).toContain('"ok"');
    // Three read-only clients per replica, each as fast as it is answered.
    const readers: Client[] = [];
    for (const r of replicas) for (let i = 0; i < 3; i++) readers.push(await team.connect(r.url, TOKEN));
    let stopReads = false;
    // A replica that dies ends the test at once, with what it said.
    const died: string[] = [];
    for (const s of team.servers)
      void s.exited.then((code) => {
        if (!stopReads) died.push(`exited ${code}: ${s.stderr().slice(-3_000)}`);
      });
    const reads = { n: 0, errors: 0 };
    const loops = readers.map((c) => readLoop(c, () => stopReads || died.length > 0, reads));

    // Gated calls on both replicas, one after another on each: 12 s of load, and 10 calls at least.
    const results: { ok: boolean; ms: number; text: string }[] = [];
    let recovered: { ok: boolean; sent: number; after: number }[] = [];
    try {
      const until = performance.now() + 12_000;
      await Promise.all(
        replicas.map(async ({ c }) => {
          while ((performance.now() < until || results.length < 10) && died.length === 0)
            results.push(await gated(c));
        }),
      );
      const ms = results.map((r) => r.ms);
      console.info(
        `gated calls under load: ${results.length}, failed ${results.filter((r) => !r.ok).length}, p50 ${p(ms, 50).toFixed(0)} ms, p99 ${p(ms, 99).toFixed(0)} ms; read-only answers ${reads.n}`,
      );
      expect(died).toEqual([]);
      expect(results.filter((r) => !r.ok).map((f) => f.text)).toEqual([]);

      // A 10 s outage of the database, the read-only load going on.
      team.pg.stop();
      const down = await Promise.all(replicas.map(({ c }) => gated(c)));
      expect(down.map((r) => r.ok)).toEqual([false, false]); // fail closed meanwhile
      await new Promise((r) => setTimeout(r, 10_000));
      team.pg.start();
      const back = performance.now();
      // Calls one after another until one runs: when was the one that ran sent, and when did it answer.
      recovered = await Promise.all(
        replicas.map(async ({ c }) => {
          for (;;) {
            const sent = performance.now() - back;
            const r = await gated(c);
            if (r.ok || sent > 30_000) return { ok: r.ok, sent, after: performance.now() - back };
          }
        }),
      );
      console.info(
        `after the outage, the first gated call that ran was sent ${recovered.map((r) => r.sent.toFixed(0)).join(' / ')} ms and answered ${recovered.map((r) => r.after.toFixed(0)).join(' / ')} ms after PostgreSQL was back; read-only answers ${reads.n}`,
      );
    } finally {
      stopReads = true;
      await Promise.all(loops);
    }
    expect(died).toEqual([]);
    expect(recovered.map((r) => r.ok)).toEqual([true, true]);
    for (const r of recovered) expect(r.sent).toBeLessThanOrEqual(2_000);

    // Every read-only call in the log has both of its records (whether or not its queue drained: never half of one).
    const rows = await team.pg.superuser(team.db.database, async (q) => {
      const r = await q.query<{ requested: string; half: string }>(
        `SELECT count(*) AS requested, count(*) FILTER (WHERE NOT EXISTS (SELECT 1 FROM skills_mcp.audit_events f
             WHERE f.call_id = e.call_id AND f.type = 'tool_call_finished')) AS half
           FROM skills_mcp.audit_events e
          WHERE e.type = 'tool_call_requested' AND e.payload::jsonb ->> 'read_only' = 'true'`,
      );
      return r.rows[0]!;
    });
    console.info(`read-only calls recorded: ${rows.requested}, with only their request: ${rows.half}`);
    expect(Number(rows.requested)).toBeGreaterThan(0);
    expect(Number(rows.half)).toBe(0);
  }, 180_000);
});
