import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExportedEvent } from '../../src/audit/parse-event-row.js';
import { csrfOf, postDecision, rawRequest } from '../console/helpers/raw-request.js';
import { consoleBase } from '../console/helpers/console-server.js';
import { approvalLink } from '../team/helpers/shared-audit.js';
import { waitFor } from '../helpers/wait-for.js';
import { consoleConfig, echo, formlessClient, type ToolResult } from './helpers/formless-client.js';
import { createAskedCall } from './helpers/create-asked-call.js';
import { startTeam, type Team } from './helpers/team.js';

// Two real server processes on one PostgreSQL log, each with its approval console. A 2025-era client that cannot
// show an approval form is served by replica B, which asks through its console and holds the tool call. The person
// opens replica A's console (its link as a person gets it: `skills-mcp console` in A's state folder), sees B's call
// there with its input, and decides it; B learns of the decision from the log and runs the call (or refuses it).
let team: Team;
let urls: Record<'a' | 'b' | 'c' | 'd', string>;
const clients: Client[] = [];

const textOf = (r: ToolResult) =>
  (r.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');

/** A replica's console link, as its person gets it: `skills-mcp console` with that replica's state folder. */
const consoleOf = (name: string) => consoleBase(team.db.writerUrl, { XDG_STATE_HOME: team.stateHome(name) });

/** The call id of the next approval asked (calls are made one after the other). */
const askedCall = createAskedCall(() => team.events());

/** How many shared views of `callId` the database holds. */
const viewRows = (callId: string) =>
  team.pg.superuser(team.db.database, async (c) =>
    Number(
      (
        await c.query<{ n: string }>(
          'SELECT count(*) AS n FROM skills_mcp.pending_views WHERE call_id = $1',
          [callId],
        )
      ).rows[0]?.n,
    ),
  );

const ofCall = (ev: ExportedEvent[], callId: string) => ev.filter((e) => e.call_id === callId);

beforeAll(async () => {
  team = await startTeam(consoleConfig({ waitMs: 30_000, timeoutMs: 120_000 }));
  const [a, b, c, d] = await Promise.all([
    team.start('a'),
    team.start('b'),
    // C gives up on an approval after 3 s: a decision made on A after that finds the call closed.
    team.start('c', undefined, { config: consoleConfig({ waitMs: 1_000, timeoutMs: 3_000 }) }),
    // D holds a tool call 1 s, then answers "pending"; the approval itself waits a minute.
    team.start('d', undefined, { config: consoleConfig({ waitMs: 1_000, timeoutMs: 60_000 }) }),
  ]);
  urls = { a: a.url, b: b.url, c: c.url, d: d.url };
}, 90_000);
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await team?.cleanup();
}, 30_000);

describe("replica A's approval console decides a call waiting on replica B (one PostgreSQL log)", () => {
  it('runs the call on B once the person approves it in A’s console, recorded once with channel console', async () => {
    const client = await formlessClient(urls.b, clients);
    const result = echo(client, 'approved on a');
    const callId = await askedCall();
    const base = consoleOf('a');
    const link = await approvalLink(base, callId);
    // A shows what B's console shows: the input values too (they are not in the audit log).
    const page = (await rawRequest(link)).body;
    expect(page).toContain('approved on a');
    expect(page).toContain('Waiting on');
    expect((await rawRequest(`${base}calls/${callId}`)).body).toContain(
      'Full input (waiting for your decision)',
    );
    expect((await postDecision(link, 'approved')).status).toBe(303);

    const r = await result;
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent).toEqual({ echo: { text: 'approved on a' }, ok: true });
    const ev = ofCall(await team.events(), callId);
    expect(ev.map((e) => e.type)).toEqual([
      'tool_call_requested',
      'policy_decided',
      'approval_requested',
      'approval_decided',
      'tool_call_started',
      'tool_call_finished',
    ]);
    expect(ev.find((e) => e.type === 'approval_requested')?.payload).toMatchObject({ channel: 'console' });
    expect(ev.find((e) => e.type === 'approval_decided')?.payload).toMatchObject({
      decision: 'approved',
      reason: 'user',
      channel: 'console',
      approver: { kind: 'console' },
    });
    // Decided: the view B shared is gone from the database.
    await waitFor(
      async () => ((await viewRows(callId)) === 0 ? true : undefined),
      15_000,
      'the shared view to go',
    );
    // A's page says what became of it; B's own console shows it decided elsewhere.
    expect((await rawRequest(link)).body).toContain('it runs on the server process that holds the call');
    expect((await rawRequest(consoleOf('b'))).body).toContain('Approve once in another server’s console');
    const v = team.verify();
    expect(v.code, v.stderr).toBe(0);
  });

  it('hands B’s waiting call the refusal when A denies it, and runs nothing', async () => {
    const client = await formlessClient(urls.b, clients);
    const result = echo(client, 'denied on a');
    const callId = await askedCall();
    const link = await approvalLink(consoleOf('a'), callId);
    expect((await postDecision(link, 'denied')).status).toBe(303);
    const r = await result;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/denied|did not approve|refused/i);
    const ev = ofCall(await team.events(), callId);
    expect(ev.map((e) => e.type)).toEqual([
      'tool_call_requested',
      'policy_decided',
      'approval_requested',
      'approval_decided',
      'tool_call_finished',
    ]);
    expect(ev.find((e) => e.type === 'approval_decided')?.payload).toMatchObject({
      decision: 'denied',
      channel: 'console',
    });
  });

  it('stops the session on B with "deny and stop" from A: its other waiting call is closed and later calls refused', async () => {
    const client = await formlessClient(urls.b, clients);
    const first = echo(client, 'stop from a');
    const firstId = await askedCall();
    const second = echo(client, 'also waiting');
    const secondId = await askedCall();
    const link = await approvalLink(consoleOf('a'), firstId);
    expect((await postDecision(link, 'abort')).status).toBe(303);
    const [r1, r2] = await Promise.all([first, second]);
    expect(r1.isError).toBe(true);
    expect(r2.isError).toBe(true);
    expect(textOf(r2)).toContain('The user stopped all skill runs in this session.');
    const before = (await team.events()).length;
    const later = await echo(client, 'after the stop');
    expect(later.isError).toBe(true);
    expect(textOf(later)).toContain('The user stopped all skill runs in this session.');
    const ev = await team.events();
    expect(ev.find((e) => e.type === 'session_aborted' && e.call_id === firstId)).toBeDefined();
    for (const id of [firstId, secondId])
      expect(ofCall(ev, id).some((e) => e.type === 'tool_call_started')).toBe(false);
    expect(
      ev.slice(before).some((e) => e.type === 'approval_requested' || e.type === 'tool_call_started'),
    ).toBe(false);
  });

  it('runs the call on the retry after "pending" when A approved it while no request waited on D', async () => {
    const client = await formlessClient(urls.d, clients);
    const first = await echo(client, 'approved between calls');
    expect(first.isError).toBe(true);
    expect(first._meta?.['skills-mcp/code']).toBe('APPROVAL_PENDING');
    const callId = await askedCall();
    expect((await postDecision(await approvalLink(consoleOf('a'), callId), 'approved')).status).toBe(303);
    // The retry continues the same call (each waits 1 s for the decision to reach D, then answers "pending").
    const r = await waitFor(
      async () => {
        const retry = await echo(client, 'approved between calls');
        return retry._meta?.['skills-mcp/code'] === 'APPROVAL_PENDING' ? undefined : retry;
      },
      15_000,
      'the retry to run the call',
    );
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r._meta?.['skills-mcp/call_id']).toBe(callId);
    expect(r.structuredContent).toEqual({ echo: { text: 'approved between calls' }, ok: true });
    const ev = ofCall(await team.events(), callId);
    expect(ev.filter((e) => e.type === 'approval_decided')).toHaveLength(1);
    expect(ev.filter((e) => e.type === 'tool_call_started')).toHaveLength(1);
  });

  it('runs nothing when A approves a call that C has meanwhile closed (its approval timed out)', async () => {
    const client = await formlessClient(urls.c, clients);
    const result = echo(client, 'too late');
    const callId = await askedCall();
    const link = await approvalLink(consoleOf('a'), callId);
    // The person loaded the page while the call waited, and presses Approve after C gave up on it.
    const csrf = csrfOf((await rawRequest(link)).body);
    const pending = await result;
    expect(pending.isError).toBe(true);
    expect(textOf(pending)).toMatch(/Approval pending/);
    await waitFor(
      async () =>
        ofCall(await team.events(), callId).some((e) => e.type === 'tool_call_finished') ? true : undefined,
      15_000,
      'C to time the approval out',
    );
    const post = await rawRequest(link, {
      method: 'POST',
      headers: { origin: new URL(link).origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: `csrf=${encodeURIComponent(csrf)}&decision=approved`,
    });
    expect(post.status).toBe(303);
    expect((await rawRequest(link)).body).toContain('no longer pending; not run');
    const ev = ofCall(await team.events(), callId);
    expect(ev.filter((e) => e.type === 'approval_decided').map((e) => e.payload)).toEqual([
      expect.objectContaining({ decision: 'denied', reason: 'timeout', channel: 'console' }),
    ]);
    expect(ev.some((e) => e.type === 'tool_call_started')).toBe(false);
  });

  it('lets no request without the console secret, origin and token decide, and keeps the values out of PostgreSQL', async () => {
    const client = await formlessClient(urls.b, clients);
    const result = echo(client, 'secret-looking value quartz-zebra');
    const callId = await askedCall();
    const base = consoleOf('a');
    const link = await approvalLink(base, callId);
    const page = (await rawRequest(link)).body;
    const csrf = csrfOf(page);
    const form = `csrf=${encodeURIComponent(csrf)}&decision=approved`;
    const path = new URL(link).pathname.split('/').slice(2).join('/');
    const origin = new URL(link).origin;
    const post = (url: string, headers: Record<string, string>, body = form) =>
      rawRequest(url, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
        body,
      });
    // No secret in the path; the secret without the page's Origin; a wrong token; another page's Origin.
    expect((await post(`${origin}/${path}`, { origin })).status).toBe(404);
    expect((await post(link, {})).status).toBe(403);
    expect((await post(link, { origin }, `csrf=${'x'.repeat(43)}&decision=approved`)).status).toBe(403);
    expect((await post(link, { origin: 'http://evil.example' })).status).toBe(403);
    // A GET of the link (what a fetch tool does) never decides; nor does the model calling the tool again.
    await rawRequest(link);
    const other = await formlessClient(urls.a, clients);
    const elsewhere = echo(other, 'secret-looking value quartz-zebra');
    await askedCall();
    expect(ofCall(await team.events(), callId).some((e) => e.type === 'approval_decided')).toBe(false);

    // PostgreSQL holds the waiting call's view sealed: no input value in the clear, in any table.
    const dump = await team.pg.superuser(team.db.database, async (c) => {
      const rows = await c.query<{ t: string }>(
        `SELECT string_agg(x::text, ' ') AS t FROM (
           SELECT row_to_json(v)::text AS x FROM skills_mcp.pending_views v
           UNION ALL SELECT encode(sealed, 'escape') FROM skills_mcp.pending_views
           UNION ALL SELECT payload FROM skills_mcp.audit_events) all_rows`,
      );
      return rows.rows[0]?.t ?? '';
    });
    expect(dump).toContain(callId);
    expect(dump).not.toContain('quartz-zebra');
    // The server's role may read, add and remove views, never change one; the audit events stay INSERT-only.
    const asWriter = await team.pg.superuser(team.db.database, async (c) => {
      await c.query(`SET ROLE ${team.db.writer.user}`);
      const denied: string[] = [];
      for (const sql of [
        `UPDATE skills_mcp.pending_views SET expires_at = now()`,
        `DELETE FROM skills_mcp.audit_events`,
      ]) {
        await c.query(sql).catch((e: Error) => denied.push(e.message));
      }
      return denied;
    });
    expect(asWriter[0]).toMatch(/permission denied/);
    expect(asWriter[1]).toMatch(/permission denied|append-only/);

    // The person decides; the call on B runs; the one the model started on A still waits for its own decision.
    expect((await postDecision(link, 'approved')).status).toBe(303);
    const r = await result;
    expect(r.isError, textOf(r)).toBeFalsy();
    const secretA = new URL(base).pathname.split('/')[1]!;
    const secretB = new URL(consoleOf('b')).pathname.split('/')[1]!;
    for (const s of team.servers) {
      expect(s.stderr()).not.toContain(secretA);
      expect(s.stderr()).not.toContain(secretB);
      expect(s.stderr()).not.toContain('quartz-zebra');
    }
    expect(JSON.stringify(r)).not.toContain(secretA);
    await other.close();
    await elsewhere.catch(() => undefined);
  });

  // Last: it stops the static token's principal everywhere.
  it('stops the principal on every replica with "deny and stop" from A for its call waiting on B', async () => {
    const onB = await formlessClient(urls.b, clients, 'auto');
    const result = echo(onB, 'stop the principal');
    const callId = await askedCall();
    expect((await postDecision(await approvalLink(consoleOf('a'), callId), 'abort')).status).toBe(303);
    const r = await result;
    expect(r.isError).toBe(true);
    const before = (await team.events()).length;
    for (const url of [urls.a, urls.d]) {
      const later = await echo(await formlessClient(url, clients, 'auto'), 'after the stop, elsewhere');
      expect(later.isError).toBe(true);
      expect(textOf(later)).toContain('The user stopped all skill runs in this session.');
    }
    const after = (await team.events()).slice(before);
    expect(after.some((e) => e.type === 'approval_requested' || e.type === 'tool_call_started')).toBe(false);
  });
});
