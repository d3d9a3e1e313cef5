import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait-for.js';
import { startTeam, TOKEN, type Team } from './helpers/team.js';

// A replica that dies while a console approval waits on it: a peer closes its sessions in the log once its lease
// expired, and the sealed view of what the person was to be shown (the input values) goes in the same transaction.
const CONFIG =
  'approval:\n  mode: ask\n  console: true\n  console_open_browser: false\n' +
  '  console_wait_ms: 30000\n  timeout_ms: 600000\n' +
  'audit_lease:\n  heartbeat_ms: 200\n  lease_ms: 2000\n';

let team: Team;
const clients: Client[] = [];

beforeAll(async () => {
  team = await startTeam(CONFIG);
}, 60_000);
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await team?.cleanup('SIGKILL');
}, 30_000);

const viewRows = () =>
  team.pg.superuser(team.db.database, async (c) =>
    (await c.query<{ call_id: string }>('SELECT call_id FROM skills_mcp.pending_views')).rows.map(
      (r) => r.call_id,
    ),
  );

describe('a replica killed while a console approval waits on it', () => {
  it('leaves no sealed view of the closed call in the database once its session is closed', async () => {
    const [a, b] = await Promise.all([team.start('a'), team.start('b')]);
    const client = new Client(
      { name: 'formless', version: '1.0.0' },
      { capabilities: {}, versionNegotiation: { mode: 'legacy' } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(b.url), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    clients.push(client);
    client.callTool({ name: 'echo', arguments: { text: 'lingering sealed input' } }).catch(() => undefined);
    const callId = await waitFor(async () => (await viewRows())[0], 15_000, 'the view to be shared');
    b.s.proc.kill('SIGKILL');
    await b.s.exited;
    // A (alive) finds B's lease expired and closes its session: the approval is denied (server_restart). The view
    // goes in the same transaction: once the denial is in the log, the row is gone.
    await waitFor(
      async () =>
        (await team.events()).some((e) => e.type === 'approval_decided' && e.call_id === callId)
          ? true
          : undefined,
      20_000,
      'the peer to close the dead replica’s approval',
    );
    expect(await viewRows()).not.toContain(callId);
    await new Promise((r) => setTimeout(r, 3_000));
    // The sealed input of a call nobody can decide any more is gone, though its approval would wait 10 minutes.
    expect(await viewRows()).not.toContain(callId);
    void a;
  }, 60_000);

  it('removes a view past its expiry at the next heartbeat, with no other approval shared', async () => {
    const a = team.servers[0]!;
    const url = /over Streamable HTTP at (http:\/\/\S+\/mcp)/.exec(a.stderr())![1]!;
    const client = new Client(
      { name: 'formless', version: '1.0.0' },
      { capabilities: {}, versionNegotiation: { mode: 'legacy' } },
    );
    await client.connect(
      new StreamableHTTPClientTransport(new URL(url), {
        requestInit: { headers: { authorization: `Bearer ${TOKEN}` } },
      }),
    );
    clients.push(client);
    client.callTool({ name: 'echo', arguments: { text: 'expiring sealed input' } }).catch(() => undefined);
    const callId = await waitFor(async () => (await viewRows())[0], 15_000, 'the view to be shared');
    // Its expiry passes (the superuser moves it: the approval itself would wait 10 minutes).
    await team.pg.superuser(team.db.database, (c) =>
      c.query(
        `UPDATE skills_mcp.pending_views SET expires_at = now() - interval '1 second' WHERE call_id = $1`,
        [callId],
      ),
    );
    await waitFor(
      async () => ((await viewRows()).includes(callId) ? undefined : true),
      15_000,
      'the expired view to be removed',
    );
  }, 30_000);
});
