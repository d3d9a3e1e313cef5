import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleBase } from '../console/helpers/console-server.js';
import { postDecision, rawRequest } from '../console/helpers/raw-request.js';
import { approvalLink, startSharedAudit, type SharedAudit } from './helpers/shared-audit.js';
import { waitFor } from '../helpers/wait-for.js';
import {
  REPLICAS,
  startTeamStack,
  textOf,
  type ReplicaName,
  type TeamClient,
  type TeamStack,
} from './helpers/team-stack.js';

describe('three replicas behind HAProxy writing one PostgreSQL audit log, with the approval console on', () => {
  let a: SharedAudit;
  let s: TeamStack;

  beforeAll(async () => {
    a = await startSharedAudit();
    // The approval console on every replica, for clients that cannot show the approval form: it holds their call
    // until the person decides (well within the client's 60 s request timeout).
    s = await startTeamStack({ ...a.stack, console: { waitMs: 45_000, timeoutMs: 120_000 } });
  }, 60_000);
  afterAll(async () => {
    await s?.stop();
    a?.cleanup();
  }, 30_000);

  /** A replica's console link, as its person gets it: `skills-mcp console --audit postgres://…` in its state folder. */
  const consoleOf = (name: ReplicaName) =>
    consoleBase(a.db.writerUrl, { XDG_STATE_HOME: s.replicas.find((r) => r.name === name)!.stateHome });

  /**
   * A formless 2025-era client of `person` through the balancer, sticky on the replica that created its session,
   * calls echo: the call is asked in the console and held there. Resolves once it is asked.
   */
  const heldCall = async (person: string, text: string) => {
    const c: TeamClient = await s.connect('legacy', await s.mint(person), { forms: false });
    const x = c.routing.served[0] as ReplicaName;
    const last = (await a.rows()).at(-1)?.event_id ?? '0';
    let settled = false;
    const result = c.client.callTool({ name: 'echo', arguments: { text } });
    // Handled here too, so a test failing before it awaits the result leaves no unhandled rejection.
    result.then(
      () => (settled = true),
      () => (settled = true),
    );
    const asked = await waitFor(
      async () => (await a.rows(`type = 'approval_requested' AND event_id > $1`, [last])).at(0),
      15_000,
      'the approval to be asked',
    );
    expect(JSON.parse(asked.payload)).toMatchObject({ channel: 'console' });
    return { c, x, callId: asked.call_id!, result, settled: () => settled };
  };

  /** Another replica than `x`: the next in order. */
  const nextAfter = (x: ReplicaName) => REPLICAS[(REPLICAS.indexOf(x) + 1) % REPLICAS.length]!;
  const pidOf = (name: ReplicaName) => s.replicas.find((r) => r.name === name)!.server.proc.pid!;
  const eventsOf = async (callId: string) =>
    (await a.rows('call_id = $1', [callId])).map((e) => ({
      type: e.type,
      payload: JSON.parse(e.payload) as Record<string, unknown>,
    }));

  it('completes a 2026-07-28 approval whose retry the balancer sends to another replica', async () => {
    const alice = await s.connect('auto', await s.mint('alice'));
    // While the form is shown, force the retry away from the replica that asked.
    let asked: string | undefined;
    alice.onAsk = () => {
      asked = alice.routing.served.at(-1);
      alice.routing.next = REPLICAS.find((r) => r !== asked)!;
    };
    const r = await alice.client.callTool({ name: 'echo', arguments: { text: 'asked here, run there' } });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(textOf(r)).toContain('asked here, run there');
    expect(alice.asked.count).toBe(1);
    expect(asked).toMatch(/^r[123]$/);
    expect(alice.routing.served.at(-1)).not.toBe(asked);
    const call = (await a.rows(`type = 'approval_requested'`)).at(-1)!.call_id;
    expect((await a.rows('call_id = $1', [call])).map((e) => e.type)).toEqual([
      'tool_call_requested',
      'policy_decided',
      'approval_requested',
      'approval_decided',
      'tool_call_started',
      'tool_call_finished',
    ]);
  });

  it("2026-07-28 era, round-robin: Alice's approval for the session follows her to every replica, not to Bob", async () => {
    const alice = await s.connect('auto', await s.mint('alice'), { decision: 'approved_for_session' });
    const bob = await s.connect('auto', await s.mint('bob'));
    const input = { name: 'echo', arguments: { text: 'granted everywhere' } };
    for (let i = 0; i < 4; i++) {
      const r = await alice.client.callTool(input);
      expect(r.isError, textOf(r)).toBeFalsy();
    }
    expect(alice.asked.count).toBe(1);
    expect(new Set(alice.routing.served).size).toBe(3);
    const r = await bob.client.callTool(input);
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(bob.asked.count).toBe(1);
  });

  it("completes a call held on one replica when the person approves it in another replica's console", async () => {
    const held = await heldCall('alice', 'approved in another console');
    const y = nextAfter(held.x);
    const link = await approvalLink(consoleOf(y), held.callId, 30_000);
    // Y's page shows what X asks: the input value, who called, and the process that holds the call.
    const page = (await rawRequest(link)).body;
    expect(page).toContain('approved in another console');
    expect(page).toContain('by <code>alice</code>');
    expect(page).toContain(`(pid ${pidOf(held.x)})`);
    // The request is still held, waiting for the person.
    expect(held.settled()).toBe(false);
    expect((await postDecision(link, 'approved')).status).toBe(303);

    const r = await held.result;
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent).toEqual({ echo: { text: 'approved in another console' }, ok: true });
    expect(r._meta?.['skills-mcp/call_id']).toBe(held.callId);
    // Every request of the session, the held one included, was answered by X.
    expect(new Set(held.c.routing.served)).toEqual(new Set([held.x]));
    expect(held.c.asked.count).toBe(0);
    const ev = await eventsOf(held.callId);
    expect(ev.map((e) => e.type)).toEqual([
      'tool_call_requested',
      'policy_decided',
      'approval_requested',
      'approval_decided',
      'tool_call_started',
      'tool_call_finished',
    ]);
    expect(ev[0]!.payload.caller).toEqual({ issuer: s.idp.issuer, subject: 'alice' });
    expect(ev[3]!.payload).toMatchObject({
      decision: 'approved',
      reason: 'user',
      channel: 'console',
      approver: { kind: 'console' },
      mac: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(ev.at(-1)!.payload).toMatchObject({ status: 'ok' });
    const v = a.verify();
    expect(v.code, v.stderr).toBe(0);
  }, 60_000);

  it("hands a call held on one replica the refusal made in another replica's console, and starts nothing", async () => {
    const held = await heldCall('bob', 'denied in another console');
    const y = nextAfter(held.x);
    const link = await approvalLink(consoleOf(y), held.callId, 30_000);
    expect(held.settled()).toBe(false);
    expect((await postDecision(link, 'denied')).status).toBe(303);

    const r = await held.result;
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/denied|did not approve|refused/i);
    expect(r._meta?.['skills-mcp/code']).toBe('APPROVAL_DENIED');
    expect(new Set(held.c.routing.served)).toEqual(new Set([held.x]));
    const ev = await eventsOf(held.callId);
    expect(ev.map((e) => e.type)).toEqual([
      'tool_call_requested',
      'policy_decided',
      'approval_requested',
      'approval_decided',
      'tool_call_finished',
    ]);
    expect(ev[0]!.payload.caller).toEqual({ issuer: s.idp.issuer, subject: 'bob' });
    expect(ev[3]!.payload).toMatchObject({
      decision: 'denied',
      channel: 'console',
      mac: expect.stringMatching(/^[0-9a-f]{64}$/),
    });
    expect(ev.at(-1)!.payload).toMatchObject({ status: 'denied' });
    const v = a.verify();
    expect(v.code, v.stderr).toBe(0);
  }, 60_000);

  it('refuses runs with a clear error while PostgreSQL is down, writes nothing half, and resumes after its restart', async () => {
    const alice = await s.connect('auto', await s.mint('alice'));
    const run = (n: number) =>
      alice.client.callTool({ name: 'sleeper', arguments: { seconds: 0, n } }).then(
        (r) => ({ ok: r.isError !== true, text: textOf(r) }),
        (e: unknown) => ({ ok: false, text: String(e) }),
      );
    // Four clients' worth of runs in a loop; the database goes away under them.
    const results: { ok: boolean; text: string; down: boolean }[] = [];
    let down = false;
    let n = 0;
    const worker = async () => {
      for (;;) {
        const wasDown = down;
        const r = await run(n++);
        results.push({ ...r, down: wasDown });
        if (wasDown && !r.ok) return;
      }
    };
    const workers = Promise.all([0, 1, 2, 3].map(worker));
    await waitFor(
      () => Promise.resolve(results.filter((r) => r.ok).length >= 8 ? true : undefined),
      15_000,
      'runs before the stop',
    );
    a.pg.stop();
    down = true;
    try {
      await workers;
      const refused = await Promise.all([run(100), run(101), run(102)]);
      for (const r of refused) {
        expect(r.ok).toBe(false);
        expect(r.text).toMatch(/audit database is unreachable/);
      }
      // A run the database did not see never answered as done.
      for (const r of [...results, ...refused].filter((x) => !x.ok)) expect(r.text).not.toMatch(/slept/);
      expect(results.filter((r) => r.down && r.ok)).toEqual([]);
    } finally {
      a.pg.start();
    }
    const again = await run(200);
    expect(again.ok, again.text).toBe(true);
    expect(again.text).toMatch(/slept/);
    const v = a.verify();
    expect(v.code, v.stderr).toBe(0);
  }, 60_000);

  it('keeps tokens, the state key, the console secrets and the database passwords out of every log and the audit store', async () => {
    const consoleSecrets = REPLICAS.map((r) => new URL(consoleOf(r)).pathname.split('/')[1]!);
    await s.stopReplicas();
    const secrets = [
      ...s.tokens,
      ...s.tokens.map((t) => t.split('.')[2]!).filter((sig) => sig.length > 20),
      s.stateKey,
      Buffer.from(s.stateKey, 'hex').toString('base64'),
      a.db.writer.password,
      a.db.owner.password,
      ...consoleSecrets,
    ];
    const stored = (await a.rows()).map((e) => `${e.call_id ?? ''} ${e.payload}`).join('\n');
    expect(stored.length).toBeGreaterThan(1000);
    const logs = [...s.replicas.map((r) => r.server.stderr()), s.haproxy.log(), stored];
    // Nothing half-written: the replicas ended their sessions, and every run that started has its end.
    const ev = await a.rows(`call_id IS NOT NULL`);
    const started = new Set(ev.filter((e) => e.type === 'tool_call_started').map((e) => e.call_id));
    const ended = new Set(
      ev.filter((e) => /^tool_call_(finished|failed|interrupted)$/.test(e.type)).map((e) => e.call_id),
    );
    expect(started.size).toBeGreaterThanOrEqual(9);
    for (const id of started) expect(ended.has(id), `call ${id}`).toBe(true);
    for (const log of logs) for (const secret of secrets) expect(log).not.toContain(secret);
  });

  it('detects an UPDATE made by the PostgreSQL superuser, who can switch the triggers off', async () => {
    expect(a.verify().code).toBe(0);
    const target = (await a.rows(`type = 'tool_call_finished'`))[0]!;
    await a.pg.superuser(a.db.database, async (c) => {
      await c.query('ALTER TABLE skills_mcp.audit_events DISABLE TRIGGER USER');
      await c.query(`UPDATE skills_mcp.audit_events SET payload = $1 WHERE event_id = $2`, [
        target.payload.replace(/\d/, (d) => String((Number(d) + 1) % 10)),
        target.event_id,
      ]);
      await c.query('ALTER TABLE skills_mcp.audit_events ENABLE TRIGGER USER');
    });
    expect((await a.rows('event_id = $1', [target.event_id]))[0]!.payload).not.toBe(target.payload);
    const v = a.verify();
    expect(v.code).toBe(1);
    expect(v.stderr).toMatch(/FAILED: the audit log does not verify/);
    expect(`${v.stdout}${v.stderr}`).toContain(String(target.event_id));
  });
});
