import type { Client } from '@modelcontextprotocol/client';
import { canonicalJson } from '../../src/canonical-json.js';
import { eventHash } from '../../src/audit/event-hash.js';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendOrderedPgEvents, type PgAppendInput } from '../../src/audit/postgres/append-pg-events.js';
import { openPgPool } from '../../src/audit/postgres/open-pg-pool.js';
import type { ExportedEvent } from '../../src/audit/parse-event-row.js';
import { HAS_CHROMIUM, sharedChromium } from '../console/helpers/browser.js';
import { consoleBase } from '../console/helpers/console-server.js';
import { enrollWith, pageWithPasskey } from '../passkeys/helpers/passkey-browser.js';
import { approvalLink } from '../team/helpers/shared-audit.js';
import { createAskedCall } from './helpers/create-asked-call.js';
import { consoleConfig, echo, formlessClient } from './helpers/formless-client.js';
import { startTeam, type Team } from './helpers/team.js';

// The server's PostgreSQL role may only append to the log. A call the log records as needing a passkey (its
// `approval_requested` says so) and then as started, with no passkey approval before the start (a denial, or no
// decision at all), is what that role can append without any person's authenticator: `audit verify` must name it.
let team: Team;
let url: string;
const clients: Client[] = [];
const pgEnv = () => ({ PGPASSWORD: team.db.writer.password, XDG_STATE_HOME: team.stateHome('cli') });

const ofCall = (ev: ExportedEvent[], callId: string, type: string) =>
  ev.find((e) => e.call_id === callId && e.type === type)!;

/** The `approval_requested` of the next call asked (calls are made one after the other). */
const nextCall = createAskedCall(() => team.events());
const nextAsked = async () => {
  const callId = await nextCall();
  return ofCall(await team.events(), callId, 'approval_requested');
};

/** Appends events through the store's own API, as the server's role (what a holder of its password can run). */
async function appendAsRole(
  sessionId: string,
  callId: string,
  events: { type: string; payload: Record<string, unknown> }[],
): Promise<void> {
  const pool = openPgPool({ url: team.db.writerUrl, env: { PGPASSWORD: team.db.writer.password } });
  try {
    await appendOrderedPgEvents(pool, { sessions: [sessionId], calls: [callId] }, () =>
      events.map((e) => ({ ...e, sessionId, callId }) as PgAppendInput),
    );
  } finally {
    await pool.end();
  }
}

/**
 * Inserts events at the head of the chain with plain SQL, as the server's role: the table's trigger checks only that
 * each extends the chain; the per-call order rules are the server's, checked in its own transactions.
 */
async function insertAsRole(
  events: { sessionId: string; callId: string; type: string; payload: Record<string, unknown> }[],
): Promise<void> {
  await team.pg.as(team.db.writer, team.db.database, async (c) => {
    await c.query('BEGIN');
    const head = await c.query<{ event_id: string; hash: string }>(
      'SELECT e.event_id::text AS event_id, e.hash FROM skills_mcp.audit_events e ORDER BY e.event_id DESC LIMIT 1',
    );
    let id = Number(head.rows[0]!.event_id);
    let prev = head.rows[0]!.hash;
    for (const e of events) {
      id++;
      const json = canonicalJson(e.payload);
      const fields = {
        event_id: id,
        ts: Date.now(),
        session_id: e.sessionId,
        call_id: e.callId,
        type: e.type,
        payload: e.payload,
      };
      const hash = eventHash(prev, fields, json);
      await c.query(
        'INSERT INTO skills_mcp.audit_events (event_id, ts, session_id, call_id, type, payload, prev_hash, hash) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)',
        [id, fields.ts, e.sessionId, e.callId, e.type, json, prev, hash],
      );
      prev = hash;
    }
    await c.query('COMMIT');
  });
}

describe.skipIf(!HAS_CHROMIUM)('audit verify of a passkey call started without a passkey approval', () => {
  const browser = sharedChromium();
  let page: Page;
  let close: () => Promise<void>;

  beforeAll(async () => {
    team = await startTeam(`${consoleConfig({ waitMs: 30_000, timeoutMs: 120_000 })}  require: passkey\n`);
    url = (await team.start('a')).url;
    const p = await pageWithPasskey(browser());
    page = p.page;
    close = () => p.context.close();
    await enrollWith(page, team.db.writerUrl, 'alice', undefined, { env: pgEnv() });
  }, 90_000);
  afterAll(async () => {
    await close?.();
    for (const c of clients) await c.close().catch(() => undefined);
    await team?.cleanup();
  }, 30_000);

  it('names a start after a denial, a start with no decision, and a run recorded after a denial, of a call that needed a passkey', async () => {
    const client = await formlessClient(url, clients);

    // One call approved with the passkey, as it should be: the log verifies, and its start and finish are the model
    // for the forged ones.
    const approved = echo(client, 'approved with a passkey');
    const first = (await nextAsked()).call_id!;
    await page.goto(
      await approvalLink(consoleBase(team.db.writerUrl, { XDG_STATE_HOME: team.stateHome('a') }), first),
    );
    await page.getByRole('button', { name: 'Approve once' }).click();
    expect((await approved).isError).toBeFalsy();
    let ev = await team.events();
    const started = ofCall(ev, first, 'tool_call_started').payload as Record<string, unknown>;
    const finished = ofCall(ev, first, 'tool_call_finished').payload as Record<string, unknown>;
    const ok = team.verify();
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);

    // A second call, asked and waiting for the person: the role records it denied, then started and finished.
    void echo(client, 'never approved');
    const asked = await nextAsked();
    const second = asked.call_id!;
    expect(asked.payload).toMatchObject({ passkey_required: true });
    const key = (asked.payload as { approval_key: string }).approval_key;
    await appendAsRole(asked.session_id, second, [
      {
        type: 'approval_decided',
        payload: { approval_key: key, decision: 'denied', reason: 'user', channel: 'console' },
      },
      { type: 'tool_call_started', payload: started },
      { type: 'tool_call_finished', payload: finished },
    ]);
    ev = await team.events();
    const forgedStart = ofCall(ev, second, 'tool_call_started');
    const denied = team.verify();
    expect(denied.code, denied.stdout + denied.stderr).toBe(1);
    expect(denied.stderr).toContain('chain: ok');
    expect(denied.stderr).toContain(
      `call ${second} (event ${forgedStart.event_id}): the call needed a passkey approval, and it was started without one`,
    );

    // A third call, asked: the role records it started with no decision at all (only its end waits for one).
    void echo(client, 'never decided');
    const third = await nextAsked();
    await appendAsRole(third.session_id, third.call_id!, [{ type: 'tool_call_started', payload: started }]);
    ev = await team.events();
    const undecided = team.verify();
    expect(undecided.code, undecided.stdout + undecided.stderr).toBe(1);
    expect(undecided.stderr).toContain(
      `call ${third.call_id} (event ${ofCall(ev, third.call_id!, 'tool_call_started').event_id}): the call needed a passkey approval, and it was started without one`,
    );

    // A fourth: recorded denied, then finished as having run, with no start at all.
    void echo(client, 'never run');
    const fourth = await nextAsked();
    await appendAsRole(fourth.session_id, fourth.call_id!, [
      {
        type: 'approval_decided',
        payload: {
          approval_key: (fourth.payload as { approval_key: string }).approval_key,
          decision: 'denied',
          reason: 'user',
          channel: 'console',
        },
      },
      { type: 'tool_call_finished', payload: finished },
    ]);
    ev = await team.events();
    const unstarted = team.verify();
    expect(unstarted.code, unstarted.stdout + unstarted.stderr).toBe(1);
    expect(unstarted.stderr).toContain(
      `call ${fourth.call_id} (event ${ofCall(ev, fourth.call_id!, 'tool_call_finished').event_id}): the call needed a passkey approval, and it was recorded as run without one`,
    );
  }, 180_000);

  it('names a second run of a call that needed a passkey, on the one approval its person signed', async () => {
    const client = await formlessClient(url, clients);
    const approved = echo(client, 'approved once, for one run');
    const callId = (await nextAsked()).call_id!;
    await page.goto(
      await approvalLink(consoleBase(team.db.writerUrl, { XDG_STATE_HOME: team.stateHome('a') }), callId),
    );
    await page.getByRole('button', { name: 'Approve once' }).click();
    expect((await approved).isError).toBeFalsy();
    let ev = await team.events();
    const started = ofCall(ev, callId, 'tool_call_started');
    const finished = ofCall(ev, callId, 'tool_call_finished');
    const clean = team.verify();
    expect(clean.stderr, clean.stdout + clean.stderr).not.toContain(`call ${callId} `);

    // The role records the call as run a second time: one signed approval, two runs.
    await insertAsRole(
      [started, finished].map((e) => ({
        sessionId: e.session_id,
        callId,
        type: e.type,
        payload: e.payload as Record<string, unknown>,
      })),
    );
    ev = await team.events();
    const again = ev.filter((e) => e.call_id === callId && e.type === 'tool_call_started')[1]!;
    const twice = team.verify();
    expect(twice.code, twice.stdout + twice.stderr).toBe(1);
    expect(twice.stderr).toContain(
      `call ${callId} (event ${again.event_id}): the call needed a passkey approval, and it was started again on its one approval`,
    );
  }, 120_000);
});
