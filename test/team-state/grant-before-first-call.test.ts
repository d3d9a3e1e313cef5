import { randomUUID } from 'node:crypto';
import type { Client } from '@modelcontextprotocol/client';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendPgEvents } from '../../src/audit/postgres/append-pg-events.js';
import { openPgPool } from '../../src/audit/postgres/open-pg-pool.js';
import { principalOf } from '../../src/transport/http/bearer-auth.js';
import { formlessClient } from './helpers/formless-client.js';
import { startTeam, textOf, tool, TOKEN, runOutputs, type Team } from './helpers/team.js';

// A database writer without the state key writes an unsigned "approve for this session" into a modern-era
// principal's first audit session id (`http-<principal>`, predictable) before that principal ever calls. The
// session the replica then starts under that id takes no grant from rows it did not write: the person is asked.
//
// Canary: the fixture's `writer` skill, which only writes out.txt into its own call folder, in the sandbox.

let team: Team;
let url: string;
const clients: Client[] = [];

const outputs = (replica: string) => runOutputs(team, replica);

beforeAll(async () => {
  team = await startTeam('approval:\n  mode: ask\n');
  ({ url } = await team.start('a'));
}, 60_000);
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await team?.cleanup();
}, 60_000);

describe('an unsigned grant written before a principal first calls', () => {
  it('does not let the call run without asking the person', async () => {
    const principalSession = `http-${principalOf(TOKEN)}`;
    // The principal has not called yet: the log holds no session of that id.
    expect((await team.events()).some((e) => e.session_id.split('.')[0] === principalSession)).toBe(false);

    // Some other session (a 2025-era one, another family) asks for the same request: its approval key is now in
    // the log in the clear, as every approval key is. Refused (no approver), nothing runs.
    // A 2025-era client that cannot show a form: its call is refused (no approver), but its request is recorded.
    const legacy = await formlessClient(url, clients);
    const r = await legacy.callTool({ name: 'writer', arguments: { text: 'canary' } });
    expect(r.isError).toBe(true);
    const req = (await team.events()).findLast((e) => e.type === 'tool_call_requested')!;
    const approvalKey = (req.payload as { approval_key: string }).approval_key;

    // The database writer (server role's password only, no state key) appends, as a valid extension of the chain,
    // an unsigned "approve for this session" into the principal's predictable first session id.
    const pool: pg.Pool = openPgPool({
      url: team.db.writerUrl,
      env: { PGPASSWORD: team.db.writer.password },
    });
    try {
      await appendPgEvents(pool, [
        {
          type: 'approval_decided',
          sessionId: principalSession,
          callId: randomUUID(),
          payload: {
            approval_key: approvalKey,
            decision: 'approved_for_session',
            reason: 'user',
            channel: 'console',
            approver: { kind: 'console' },
          },
        },
      ]);
    } finally {
      await pool.end();
    }

    // The principal's first modern-era call with that request.
    const modern = await team.connect(url, TOKEN);
    const res = await tool(modern, 'writer', { text: 'canary' });
    const ev = await team.events();
    const started = ev.filter((e) => e.type === 'tool_call_started');
    // The person is asked (input_required with a requestState), nothing starts, no file is written.
    expect(
      started.map((e) => e.session_id),
      `ran without asking: ${textOf(res)}`,
    ).toEqual([]);
    expect(outputs('a')).toEqual([]);
    expect(res.requestState, 'the call was not asked').toBeTypeOf('string');
  }, 60_000);
});
