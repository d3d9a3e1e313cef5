import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { CHAIN_LOCK } from '../../src/audit/postgres/pg-schema.js';
import { startTeam, tool, TOKEN, type Team } from './helpers/team.js';

// A replica on a PostgreSQL log whose chain lock another connection holds: the read-only records cannot be written,
// wait in their bounded queue (two here) and, past it, are shed. The answers go on; /healthz says how many were shed
// and the warn log says it too. Once the lock is let go, the records that waited are written.
const CONFIG = 'audit_records:\n  max_queued: 2\n';

let team: Team;
let url: string;
let c: Client;

beforeAll(async () => {
  team = await startTeam(CONFIG);
  ({ url, c } = await team.start('a'));
}, 60_000);
afterAll(() => team?.cleanup(), 60_000);

interface Health {
  status: string;
  auditRecords?: { queued: number; written: number; shed: number; failed: number };
}

const health = async (token?: string): Promise<Health> => {
  const res = await fetch(url.replace(/\/mcp$/, '/healthz'), {
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
  });
  expect(res.status).toBe(200);
  return (await res.json()) as Health;
};

const read = () => tool(c, 'read_skill_file', { skill: 'echo', path: 'SKILL.md' });

describe('read-only records shed under pressure (PostgreSQL log)', () => {
  it('counts the shed records in /healthz and says them in the warn log', async () => {
    // The session is started and the log open: nothing but read-only records needs the chain lock below.
    expect((await read()).isError).not.toBe(true);
    await vi.waitFor(async () => expect((await health(TOKEN)).auditRecords?.written).toBe(1), {
      timeout: 10_000,
    });
    expect((await health(TOKEN)).auditRecords).toEqual({ queued: 0, written: 1, shed: 0, failed: 0 });
    // Without the token: only the status.
    expect(await health()).toEqual({ status: 'ok' });

    await team.pg.superuser(team.db.database, async (q) => {
      await q.query('SELECT pg_advisory_lock($1)', [CHAIN_LOCK]);
      try {
        // Answered meanwhile: a read-only call never waits for its record.
        for (let i = 0; i < 20; i++) expect((await read()).isError).not.toBe(true);
        await vi.waitFor(async () => expect((await health(TOKEN)).auditRecords?.shed).toBeGreaterThan(0), {
          timeout: 5_000,
        });
        const counts = (await health(TOKEN)).auditRecords!;
        console.info(`while the chain lock was held: ${JSON.stringify(counts)}`);
        expect(counts.queued).toBeLessThanOrEqual(2);
        await vi.waitFor(() => expect(team.servers[0]!.stderr()).toMatch(/read-only calls not audited/), {
          timeout: 12_000,
        });
        const line = team.servers[0]!.stderr()
          .split('\n')
          .find((l) => l.includes('read-only calls not audited'))!;
        expect(line).toMatch(/"shed":[1-9]/);
      } finally {
        await q.query('SELECT pg_advisory_unlock($1)', [CHAIN_LOCK]);
      }
    });
    // What waited is written; the shed ones stay counted.
    await vi.waitFor(
      async () => {
        const r = (await health(TOKEN)).auditRecords!;
        expect(r.queued).toBe(0);
        expect(r.written + r.shed + r.failed).toBe(21);
      },
      { timeout: 20_000 },
    );
    const after = (await health(TOKEN)).auditRecords!;
    console.info(`after the lock was let go: ${JSON.stringify(after)}`);
    expect(after.shed).toBeGreaterThan(0);
    expect(after.written).toBeGreaterThan(1);
  }, 90_000);
});
