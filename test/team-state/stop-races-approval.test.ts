import type { Client } from '@modelcontextprotocol/client';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHAIN_LOCK } from '../../src/audit/postgres/pg-schema.js';
import { waitFor } from '../helpers/wait-for.js';
import { startTeam, textOf, tool, type Raw, type Team } from './helpers/team.js';

// "Deny and stop" answered on replica A while the same principal's approval of another call is answered on replica
// B. The test holds the chain lock (as a long append of a third replica would) so that B has read the stops (none
// yet) before A's stop commits, and B's approval reaches the database after it: the check under the chain lock
// refuses B's approval, and B answers its call as stopped without running it.
let team: Team;
let a: Client;
let b: Client;

const lastAsked = async (r: Raw) => {
  expect(r.requestState, textOf(r)).toBeTypeOf('string');
  return (await team.events()).findLast((e) => e.type === 'approval_requested')!.call_id!;
};

beforeAll(async () => {
  team = await startTeam('approval:\n  mode: ask\n');
  [a, b] = (await Promise.all([team.start('a'), team.start('b')])).map((r) => r.c) as [Client, Client];
}, 60_000);
afterAll(() => team?.cleanup());

describe('a stop on one replica racing an approval on another (PostgreSQL log)', () => {
  it('refuses the approval committed after the stop, and nothing of the call runs', async () => {
    const onB = await tool(b, 'writer', { text: 'approved on b' });
    const callB = await lastAsked(onB);
    const onA = await tool(a, 'echo', { text: 'stop everything' });
    const callA = await lastAsked(onA);

    const holder = new pg.Client({
      host: team.pg.socketDir,
      user: team.db.writer.user,
      password: team.db.writer.password,
      database: team.db.database,
    });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1)', [CHAIN_LOCK]);
      await team.pg.superuser(team.db.database, async (watch) => {
        // Backends of the replicas waiting inside a transaction for the chain lock the test holds.
        const waiters = async () =>
          (
            await watch.query<{ n: number }>(
              `SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = $1 AND xact_start IS NOT NULL
               AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
              [team.db.database],
            )
          ).rows[0]!.n;
        const before = await waiters();
        const stop = tool(
          a,
          'echo',
          { text: 'stop everything' },
          { state: onA.requestState, decision: 'abort' },
        );
        await waitFor(async () => (await waiters()) > before, 20_000, 'A to wait for the lock with its stop');
        const approve = tool(b, 'writer', { text: 'approved on b' }, { state: onB.requestState });
        // B has read the stops (none committed yet) and waits for the lock with its approval.
        await waitFor(
          async () => (await waiters()) > before + 1,
          20_000,
          'B to wait for the lock with its approval',
        );
        await holder.query('COMMIT');
        const [stopped, approved] = await Promise.all([stop, approve]);
        expect(stopped.isError, textOf(stopped)).toBe(true);
        expect(approved.isError, textOf(approved)).toBe(true);
        expect(textOf(approved)).toContain('The user stopped all skill runs');
      });
    } finally {
      await holder.end();
    }

    const ev = await team.events();
    const aborted = ev.find((e) => e.type === 'session_aborted' && e.call_id === callA);
    expect(aborted).toBeDefined();
    const ofB = ev.filter((e) => e.call_id === callB);
    expect(ofB.find((e) => e.type === 'tool_call_started')).toBeUndefined();
    const decided = ofB.filter((e) => e.type === 'approval_decided');
    expect(decided.map((e) => e.payload)).toEqual([
      expect.objectContaining({ decision: 'denied', reason: 'session_aborted' }),
    ]);
    expect(ofB.at(-1)).toMatchObject({ type: 'tool_call_finished', payload: { status: 'denied' } });

    const later = await tool(b, 'echo', { text: 'after the race' });
    expect(later.isError).toBe(true);
  }, 60_000);
});
