import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import type pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { appendOrderedPgEvents } from '../../src/audit/postgres/append-pg-events.js';
import { openPgPool } from '../../src/audit/postgres/open-pg-pool.js';
import type { ExportedEvent } from '../../src/audit/parse-event-row.js';
import { summarizeInput } from '../../src/gate/index.js';
import { csrfOf, postDecision, rawRequest } from '../console/helpers/raw-request.js';
import { consoleBase, pendingLinks } from '../console/helpers/console-server.js';
import { approvalLink } from '../team/helpers/shared-audit.js';
import { waitFor } from '../helpers/wait-for.js';
import { consoleConfig, echo, formlessClient } from './helpers/formless-client.js';
import { startTeam, type Team } from './helpers/team.js';

// What "any replica's console decides the console approvals waiting on the others" does against someone who can
// write to the database without the state key, against a crowd of waiting approvals and against a console page left
// open. Three real server processes (A, B, and C with short approval timeouts) on one PostgreSQL log, real MCP
// clients that declare no elicitation, A's console link as its person gets it. The only skill run is the fixture's
// `echo` (prints its input), in the sandbox.

let team: Team;
let urls: Record<'a' | 'b' | 'c', string>;
const clients: Client[] = [];
/** Calls here may wait for a person longer than the client's default request timeout. */
const CALL_TIMEOUT_MS = 180_000;

/** The call id of the call whose input is `{text}` (other than `except`), once its approval was asked. */
const callOf = (text: string, ms = 15_000, except: string[] = []) => {
  const digest = summarizeInput({ text }).input_sha256;
  return waitFor(
    async () => {
      const ev = await team.events();
      const req = ev.find(
        (e) =>
          e.type === 'tool_call_requested' &&
          (e.payload as { input_sha256?: string }).input_sha256 === digest &&
          !except.includes(e.call_id!),
      );
      if (req === undefined) return undefined;
      return ev.some((e) => e.type === 'approval_requested' && e.call_id === req.call_id)
        ? req.call_id!
        : undefined;
    },
    ms,
    `the approval of ${text.slice(0, 20)} to be asked`,
  );
};

/** A replica's console link, as its person gets it: `skills-mcp console` with that replica's state folder. */
const consoleOf = (name: string) => consoleBase(team.db.writerUrl, { XDG_STATE_HOME: team.stateHome(name) });

const ofCall = (ev: ExportedEvent[], callId: string) => ev.filter((e) => e.call_id === callId);
const stateKey = () => readFileSync(join(team.fx.dir, 'state.key'), 'utf8').trim();

/** Appends events as a role holding only the server's database password would: a valid extension of the chain. */
async function asDatabaseWriter(sessionId: string, callId: string, payload: Record<string, unknown>) {
  const pool: pg.Pool = openPgPool({ url: team.db.writerUrl, env: { PGPASSWORD: team.db.writer.password } });
  try {
    await appendOrderedPgEvents(pool, { sessions: [sessionId], calls: [callId] }, () => [
      { type: 'approval_decided', sessionId, callId, payload },
    ]);
  } finally {
    await pool.end();
  }
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Bytes a process has read so far, from files, pipes and sockets (`rchar` of /proc/<pid>/io). */
const bytesRead = (pid: number): number =>
  Number(/^rchar: (\d+)$/m.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))![1]);

beforeAll(async () => {
  team = await startTeam(consoleConfig({ waitMs: 30_000, timeoutMs: 120_000 }));
  const [a, b, c] = await Promise.all([
    team.start('a'),
    team.start('b'),
    // C: a replica whose approvals expire sooner (a config being rolled out, or simply another team's settings).
    team.start('c', undefined, { config: consoleConfig({ waitMs: 1_000, timeoutMs: 25_000 }) }),
  ]);
  urls = { a: a.url, b: b.url, c: c.url };
}, 90_000);
afterAll(async () => {
  for (const c of clients) await c.close().catch(() => undefined);
  await team?.cleanup();
}, 60_000);

describe('the shared approval console against database writers, crowds and open pages', () => {
  it('runs nothing on B for a decision written without the state key', async () => {
    const client = await formlessClient(urls.b, clients);
    const text = 'forged-decision canary';
    const result = echo(client, text, CALL_TIMEOUT_MS);
    const callId = await callOf(text);
    const ev = ofCall(await team.events(), callId);
    const asked = ev.find((e) => e.type === 'approval_requested')!;
    const sessionId = asked.session_id;
    const key = (asked.payload as { approval_key: string }).approval_key;

    // Someone holding only the server role's database password (no state key, no console secret) approves it,
    // with the project's own ordered append (it extends the chain like any replica would).
    await asDatabaseWriter(sessionId, callId, {
      approval_key: key,
      decision: 'approved',
      reason: 'user',
      channel: 'console',
      approver: { kind: 'console' },
    });
    // B sees the decision (it polls every 300 ms), says so in its log, and ignores it: no MAC made with the key.
    const b = team.servers[1]!;
    await waitFor(
      () =>
        Promise.resolve(
          b.stderr().includes('ignored a decision recorded elsewhere whose MAC does not verify')
            ? true
            : undefined,
        ),
      15_000,
      'B to ignore the decision',
    );
    const outcome = await Promise.race([result.then((r) => ({ r })), sleep(2_000).then(() => undefined)]);
    const after = ofCall(await team.events(), callId);
    expect(
      after.some((e) => e.type === 'tool_call_started'),
      'B started the call on a forged approval_decided',
    ).toBe(false);
    expect(outcome, 'B answered the held request').toBeUndefined();
    expect(JSON.stringify(outcome?.r.structuredContent ?? null)).not.toContain(text);
    // The decisions B acts on carry a MAC; this one has none. Nothing secret in B's log.
    expect(after.find((e) => e.type === 'approval_decided')?.payload).not.toHaveProperty('mac');
    expect(b.stderr()).not.toContain(stateKey());
  });

  it('answers a held call at once with a refusal written without the state key (a refusal can only refuse)', async () => {
    const client = await formlessClient(urls.b, clients);
    const text = 'unsigned refusal canary';
    const result = echo(client, text, CALL_TIMEOUT_MS);
    const callId = await callOf(text);
    const asked = ofCall(await team.events(), callId).find((e) => e.type === 'approval_requested')!;
    // As a peer's lease sweep writes them for a dead replica's calls: unsigned.
    await asDatabaseWriter(asked.session_id, callId, {
      approval_key: (asked.payload as { approval_key: string }).approval_key,
      decision: 'denied',
      reason: 'server_restart',
      channel: 'console',
      approver: { kind: 'console' },
    });
    const r = await result;
    expect(r.isError).toBe(true);
    expect(r._meta?.['skills-mcp/code']).toBe('APPROVAL_DENIED');
    expect(JSON.stringify(r.structuredContent ?? null)).not.toContain(text);
    expect(ofCall(await team.events(), callId).some((e) => e.type === 'tool_call_started')).toBe(false);
  });

  it('closes unrun, at its timeout, a call whose decision was written without the state key', async () => {
    // Held on C (approvals time out after 25 s; the request answers "pending" after 1 s).
    const client = await formlessClient(urls.c, clients);
    const text = 'forged decision on c';
    expect((await echo(client, text, CALL_TIMEOUT_MS))._meta?.['skills-mcp/code']).toBe('APPROVAL_PENDING');
    const callId = await callOf(text);
    const asked = ofCall(await team.events(), callId).find((e) => e.type === 'approval_requested')!;
    await asDatabaseWriter(asked.session_id, callId, {
      approval_key: (asked.payload as { approval_key: string }).approval_key,
      decision: 'approved',
      reason: 'user',
      channel: 'console',
      approver: { kind: 'console' },
    });
    // C's timeout cannot be recorded (the log holds a decision): C ends the call unrun.
    const end = await waitFor(
      async () => ofCall(await team.events(), callId).find((e) => e.type === 'tool_call_finished'),
      45_000,
      'C to end the call at its timeout',
    );
    expect(end.payload).toMatchObject({ status: 'denied', error_code: 'APPROVAL_DENIED' });
    expect(ofCall(await team.events(), callId).some((e) => e.type === 'tool_call_started')).toBe(false);
    // As after any timeout, the same request again is a new call, asked anew; nothing ran.
    const retry = await echo(client, text, CALL_TIMEOUT_MS);
    expect(retry._meta?.['skills-mcp/code']).toBe('APPROVAL_PENDING');
    expect(retry._meta?.['skills-mcp/call_id']).not.toBe(callId);
    expect(retry.isError).toBe(true);
    expect(JSON.stringify(retry.structuredContent ?? null)).not.toContain(text);
    expect(team.servers[2]!.stderr()).toContain(
      'ignored a decision recorded elsewhere whose MAC does not verify',
    );
    expect(team.servers[2]!.stderr()).not.toContain(stateKey());
  }, 60_000);

  it('applies no session grant written without the state key: the same request on another replica is asked again', async () => {
    // A 2026-07-28 client on C: its session is its principal on every replica. Its call waits (console), "pending".
    const onC = await formlessClient(urls.c, clients, 'auto');
    const text = 'forged grant canary';
    expect((await echo(onC, text, CALL_TIMEOUT_MS))._meta?.['skills-mcp/code']).toBe('APPROVAL_PENDING');
    const x = await callOf(text);
    const asked = ofCall(await team.events(), x).find((e) => e.type === 'approval_requested')!;
    // "Approve for this session", forged into the principal's session on C.
    await asDatabaseWriter(asked.session_id, x, {
      approval_key: (asked.payload as { approval_key: string }).approval_key,
      decision: 'approved_for_session',
      reason: 'user',
      channel: 'console',
      approver: { kind: 'console' },
    });
    // The same request on B (a new call there): B reads the principal's grants from the log before it; a grant
    // would run it at once. It is asked instead.
    const onB = await formlessClient(urls.b, clients, 'auto');
    const elsewhere = echo(onB, text, CALL_TIMEOUT_MS);
    const y = await callOf(text, 15_000, [x]);
    const ev = await team.events();
    expect(ofCall(ev, y).map((e) => e.type)).toEqual([
      'tool_call_requested',
      'policy_decided',
      'approval_requested',
    ]);
    expect(
      ev.filter((e) => e.type === 'tool_call_started' && (e.call_id === x || e.call_id === y)),
    ).toHaveLength(0);
    expect(team.servers[1]!.stderr()).toContain('ignored a session grant whose MAC does not verify');
    // Deny Y on A so that it does not linger.
    expect((await postDecision(await approvalLink(consoleOf('a'), y), 'denied')).status).toBe(303);
    const r = await elsewhere;
    expect(r.isError).toBe(true);
    expect(JSON.stringify(r.structuredContent ?? null)).not.toContain(text);
    expect(ofCall(await team.events(), y).some((e) => e.type === 'tool_call_started')).toBe(false);
  }, 60_000);

  it('shows no view whose sealed card a database writer moved to another call id', async () => {
    const client = await formlessClient(urls.b, clients);
    const zText = 'tamper source zebra';
    const wText = 'tamper target walrus';
    const z = echo(client, zText, CALL_TIMEOUT_MS);
    const zId = await callOf(zText);
    const w = echo(client, wText, CALL_TIMEOUT_MS);
    const wId = await callOf(wText);
    const base = consoleOf('a');
    await approvalLink(base, zId);
    await approvalLink(base, wId);
    // Fresh console state on A is not possible without a restart; so tamper with a third call A has not read yet.
    const vText = 'tamper target vole';
    const v = echo(client, vText, CALL_TIMEOUT_MS);
    const vId = await callOf(vText);
    await waitFor(
      async () =>
        team.pg.superuser(team.db.database, async (c) =>
          (await c.query('SELECT 1 FROM skills_mcp.pending_views WHERE call_id = $1', [vId])).rowCount === 1
            ? true
            : undefined,
        ),
      15_000,
      'V shared',
    );
    await team.pg.superuser(team.db.database, async (c) => {
      await c.query(`SET ROLE ${team.db.writer.user}`);
      await c.query('BEGIN');
      await c.query('DELETE FROM skills_mcp.pending_views WHERE call_id = $1', [vId]);
      await c.query(
        `INSERT INTO skills_mcp.pending_views (call_id, session_id, host, pid, expires_at, sealed)
           SELECT $1, session_id, host, pid, expires_at, sealed FROM skills_mcp.pending_views WHERE call_id = $2`,
        [vId, zId],
      );
      await c.query('COMMIT');
    });
    // No approval card (decision form) on A shows V, nor Z's content under V's call id.
    const cards = await Promise.all((await pendingLinks(base)).map(async (l) => (await rawRequest(l)).body));
    expect(cards.some((b) => b.includes(`calls/${vId}`))).toBe(false);
    expect(cards.filter((b) => b.includes(zText))).toHaveLength(1);
    expect(cards.some((b) => b.includes(`calls/${zId}`))).toBe(true);
    // The full-input page of V shows no waiting input either.
    expect((await rawRequest(`${base}calls/${vId}`)).body).not.toContain(zText);
    void z;
    void w;
    void v;
  });

  it('does not spend on B an approval made on A for a 2026-07-28 call kept on C', async () => {
    const onC = await formlessClient(urls.c, clients, 'auto');
    const text = 'retry lands elsewhere';
    const first = await echo(onC, text, CALL_TIMEOUT_MS);
    expect(first._meta?.['skills-mcp/code']).toBe('APPROVAL_PENDING');
    const x = await callOf(text);
    expect((await postDecision(await approvalLink(consoleOf('a'), x), 'approved')).status).toBe(303);
    // The model sends exactly the same request (same principal, same session) to B: a new call, asked anew.
    const onB = await formlessClient(urls.b, clients, 'auto');
    const elsewhere = echo(onB, text, CALL_TIMEOUT_MS);
    await sleep(3_000);
    const ev = await team.events();
    const digest = summarizeInput({ text }).input_sha256;
    const calls = ev
      .filter(
        (e) =>
          e.type === 'tool_call_requested' &&
          (e.payload as { input_sha256?: string }).input_sha256 === digest,
      )
      .map((e) => e.call_id!);
    expect(calls).toHaveLength(2);
    const y = calls.find((c) => c !== x)!;
    expect(ofCall(ev, y).map((e) => e.type)).toEqual([
      'tool_call_requested',
      'policy_decided',
      'approval_requested',
    ]);
    expect(ev.filter((e) => e.type === 'tool_call_started' && calls.includes(e.call_id!))).toHaveLength(0);
    // The retry on C runs X, once.
    const r = await waitFor(
      async () => {
        const retry = await echo(onC, text, CALL_TIMEOUT_MS);
        return retry._meta?.['skills-mcp/code'] === 'APPROVAL_PENDING' ? undefined : retry;
      },
      15_000,
      'the retry on C to run X',
    );
    expect(r._meta?.['skills-mcp/call_id']).toBe(x);
    expect(r.isError).toBeFalsy();
    expect(ofCall(await team.events(), x).filter((e) => e.type === 'tool_call_started')).toHaveLength(1);
    // Y is still asked: deny it on A so it does not linger.
    expect((await postDecision(await approvalLink(consoleOf('a'), y), 'denied')).status).toBe(303);
    await elsewhere;
  }, 60_000);

  describe('a crowd of approvals on other replicas', () => {
    let victimX: string;
    let linkX: string;

    it('shows X, waiting on B, on A', async () => {
      const client = await formlessClient(urls.b, clients);
      const text = 'victim X on b';
      void echo(client, text, CALL_TIMEOUT_MS);
      victimX = await callOf(text);
      linkX = await approvalLink(consoleOf('a'), victimX);
      expect((await rawRequest(linkX)).body).toContain('name="csrf"');
    });

    it('keeps X decidable on A while 105 of the same principal’s approvals wait on C', async () => {
      // 7 legacy sessions × 15 waiting approvals on C (per_session 16): each request answers "pending" after 1 s.
      const floods: Promise<unknown>[] = [];
      for (let s = 0; s < 7; s++) {
        const c = await formlessClient(urls.c, clients);
        for (let i = 0; i < 15; i++) floods.push(echo(c, `crowd ${s}-${i}`, CALL_TIMEOUT_MS));
      }
      await Promise.all(floods);
      const rowsOnC = await team.pg.superuser(team.db.database, async (c) =>
        Number(
          (await c.query<{ n: string }>('SELECT count(*) AS n FROM skills_mcp.pending_views')).rows[0]?.n,
        ),
      );
      expect(rowsOnC).toBeGreaterThan(100);
      // The person's page refreshes (every 2 s); X still waits on B, nothing decided it.
      const base = consoleOf('a');
      await rawRequest(base);
      const page = (await rawRequest(linkX)).body;
      // X is listed (the listed slots are taken in turn from each session), under the same card.
      expect(await approvalLink(base, victimX)).toBe(linkX);
      expect(ofCall(await team.events(), victimX).some((e) => e.type === 'approval_decided')).toBe(false);
      expect(page, 'A shows X as no longer waiting while it still waits on B').not.toContain(
        'no longer waiting: decided or closed elsewhere',
      );
      expect(page).toContain('name="csrf"');
    });

    it('lists a new approval asked on B while 100+ others wait elsewhere, and says how many are not listed', async () => {
      const client = await formlessClient(urls.b, clients);
      const text = 'victim Y on b';
      void echo(client, text, CALL_TIMEOUT_MS);
      const y = await callOf(text);
      // It shows up (its session gets a listed slot however many the crowd's sessions have), and the page says that
      // some waiting approvals are not listed.
      const base = consoleOf('a');
      const found = await approvalLink(base, y, 6_000).catch(() => undefined);
      const index = (await rawRequest(base)).body;
      expect(found !== undefined || /not (shown|listed)|more waiting/i.test(index)).toBe(true);
      expect(found).toBeDefined();
      expect(index).toMatch(
        /\d+ more approvals? (is|are) waiting on other server processes, not listed here/,
      );
    });

    it('keeps X on its card once the crowd on C has expired, and closes the crowd’s cards', async () => {
      // The crowd's approvals time out on C (25 s after they were asked).
      const base = consoleOf('a');
      await waitFor(
        async () => {
          const index = (await rawRequest(base)).body;
          return /crowd \d+-\d+/.test(index) || /not listed here/.test(index) ? undefined : true;
        },
        45_000,
        'the crowd on C to expire',
      );
      // X never stopped waiting on B: the same card, still decidable.
      const again = await approvalLink(base, victimX);
      expect(again).toBe(linkX);
      const page = await rawRequest(linkX);
      expect(page.status).toBe(200);
      expect(page.body).toContain('name="csrf"');
      expect(page.body).not.toContain('no longer waiting');
    }, 60_000);
  });

  it(
    'does not re-read or re-open the sealed views on each console page view',
    async () => {
      // 20 waiting approvals on B with ~3 MB of input each (4 sessions × 5; per_session_bytes is 16 MiB).
      const big = (n: number) => `${n}`.padEnd(3_000_000, 'x');
      const held: Promise<unknown>[] = [];
      for (let s = 0; s < 4; s++) {
        const c = await formlessClient(urls.b, clients);
        for (let i = 0; i < 5; i++) held.push(echo(c, big(s * 5 + i)));
      }
      await waitFor(
        async () =>
          team.pg.superuser(team.db.database, async (c) => {
            const n = Number(
              (
                await c.query<{ n: string }>(
                  'SELECT count(*) AS n FROM skills_mcp.pending_views ' +
                    'WHERE octet_length(sealed) + coalesce(octet_length(sealed_input), 0) > 2000000',
                )
              ).rows[0]?.n,
            );
            return n >= 20 ? true : undefined;
          }),
        60_000,
        'the 20 big views to be shared',
      );
      const base = consoleOf('a');
      await rawRequest(base); // first look: opening each once is fair
      // From now on no card in the database opens: a page view that fetched and opened them again would lose all 20.
      await team.pg.superuser(team.db.database, (c) =>
        c.query(`UPDATE skills_mcp.pending_views SET sealed = sealed || '\\x00'::bytea`),
      );
      // What one open console tab does (it re-fetches the page every 2 s): each view a look of its own (one a second
      // at most), none of which reads the 60 MB of input held in the database (bytes A read, sockets included).
      const pid = team.servers[0]!.proc.pid!;
      const before = bytesRead(pid);
      for (let i = 0; i < 5; i++) {
        await sleep(1_100);
        expect((await rawRequest(base)).status).toBe(200);
      }
      const read = bytesRead(pid) - before;
      expect(read, `A read ${read} bytes serving 5 console page views`).toBeLessThan(3_000_000);
      // The 20 are listed on A, and the page of one shows its whole input (read for that page only).
      const size = `${Buffer.byteLength(JSON.stringify({ text: big(0) }))} bytes`;
      const links = await pendingLinks(base);
      const cards = await Promise.all(links.map(async (l) => (await rawRequest(l)).body));
      expect(cards.filter((c) => c.includes(size))).toHaveLength(20);
      const one = /calls\/([0-9a-f-]{36})/.exec(cards.find((c) => c.includes(size))!)![1]!;
      const full = (await rawRequest(`${base}calls/${one}`)).body;
      expect(full).toContain('Full input (waiting for your decision)');
      expect(full).toContain(`${'x'.repeat(1_000)}`);
      void held;
    },
    CALL_TIMEOUT_MS,
  );
});

void csrfOf;
