import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, sharedChromium } from '../console/helpers/browser.js';
import {
  consoleBase,
  consoleConfig,
  consoleServers,
  pendingLinks,
} from '../console/helpers/console-server.js';
import { freePort } from '../helpers/free-port.js';
import { gatedFixture, type GatedFixture } from '../helpers/gated-fixture.js';
import { startOidcIssuer, type OidcIssuer } from '../helpers/oidc-issuer.js';
import { runCli } from '../helpers/run-cli.js';
import { waitFor } from '../helpers/wait-for.js';
import { auditEvents, type Exported } from '../http/helpers/audit-events.js';
import { connectClient, type Connected } from '../http/helpers/connect-client.js';
import { servedUrl, spawnCli, type SpawnedServer } from '../http/helpers/spawn-server.js';
import { copyOf, editEvidence, editPayload } from './helpers/audit-copy.js';
import { enrollWith, pageWithPasskey } from './helpers/passkey-browser.js';

const FOUR_EYES = '  require: { four_eyes: { skills: [echo] } }\n';
const SCOPES = ['skills:read', 'skills:run'];

const textOf = (r: { content?: unknown }) =>
  ((r.content as { type: string; text?: string }[] | undefined) ?? []).map((c) => c.text ?? '').join('\n');

/** The event id of each call's `approval_decided`, from `audit export --events-only` (which numbers events). */
const exportedIds = (auditPath: string): Map<string, number> =>
  new Map(
    runCli(['audit', 'export', '--jsonl', '--events-only', '--audit', auditPath])
      .stdout.split('\n')
      .filter((l) => l.includes('"approval_decided"'))
      .map((l) => JSON.parse(l) as { event_id: number; call_id: string })
      .map((e) => [e.call_id, e.event_id]),
  );

const ofCall = (events: Exported[], callId: string | undefined, type: string) =>
  events.filter((e) => e.call_id === callId && e.type === type);

describe.skipIf(!HAS_CHROMIUM)('four eyes: a passkey of someone other than the signed-in caller', () => {
  const browser = sharedChromium();
  let idp: OidcIssuer;
  let fx: GatedFixture;
  let server: SpawnedServer;
  let url: string;
  let resource: string;
  let base: string;
  const clients: Connected[] = [];
  const closers: (() => Promise<void>)[] = [];

  beforeAll(async () => {
    idp = await startOidcIssuer(
      [
        { id: 'alice', groups: [] },
        { id: 'bob', groups: [] },
      ],
      SCOPES,
    );
    fx = gatedFixture('');
    const port = await freePort();
    resource = `http://127.0.0.1:${port}/mcp`;
    writeFileSync(
      fx.configFile,
      `${consoleConfig({ waitMs: 30_000, extra: FOUR_EYES })}` +
        `http:\n  oauth:\n    issuer: ${idp.issuer}\n    resource: ${resource}\n`,
    );
    server = spawnCli(['--http', '--port', String(port), '--no-elicitation', ...fx.args], {
      SKILLS_MCP_LOG_LEVEL: 'info',
    });
    url = await servedUrl(server);
    await waitFor(() => server.stderr().includes('approval console ready'), 10_000, 'the console');
    base = consoleBase(fx.auditPath);
  }, 60_000);
  afterAll(async () => {
    for (const c of clients.splice(0)) await c.client.close().catch(() => undefined);
    server.proc.kill('SIGTERM');
    await server.exited;
    await idp.close();
    fx.cleanup();
  });
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
  });

  /** A browser holding `person`'s passkey, enrolled with their subject. */
  const personWithPasskey = async (person: string) => {
    const p = await pageWithPasskey(browser());
    closers.push(() => p.context.close());
    await enrollWith(p.page, fx.auditPath, person, undefined, { subject: person });
    return p.page;
  };

  /** Alice's call, waiting in the console: its result, and its approval page. */
  const aliceCalls = async (text: string) => {
    const before = new Set(await pendingLinks(base));
    const alice = await connectClient(url, 'auto', await idp.token('alice', SCOPES.join(' '), resource));
    clients.push(alice);
    const result = alice.client.callTool({ name: 'echo', arguments: { text } });
    result.catch(() => undefined);
    let link: string | undefined;
    await waitFor(
      async () => (link = (await pendingLinks(base)).find((l) => !before.has(l))) !== undefined,
      20_000,
      "Alice's approval in the console",
    );
    return { result, link: link! };
  };

  const approveWith = async (page: Awaited<ReturnType<typeof personWithPasskey>>, link: string) => {
    await page.goto(link);
    await page.getByRole('button', { name: 'Approve once' }).click();
  };

  it("runs Alice's call approved with Bob's passkey, and the log names Bob as the approver", async () => {
    const bob = await personWithPasskey('bob');
    const call = await aliceCalls('seen by bob');
    await approveWith(bob, call.link);
    const result = await call.result;
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(textOf(result)).toContain('seen by bob');
    await waitFor(() => server.stderr().includes('"approver":"bob"'), 10_000, 'the decision log line');
    const events = auditEvents(fx.auditPath);
    const decided = events.filter((e) => e.type === 'approval_decided').at(-1)!;
    expect(decided.payload).toMatchObject({
      decision: 'approved',
      channel: 'console',
      approver: { kind: 'console', person: { name: 'bob', subject: 'bob' } },
      passkey: { person: { name: 'bob', subject: 'bob' } },
    });
    expect(ofCall(events, decided.call_id!, 'tool_call_requested')[0]?.payload).toMatchObject({
      caller: { subject: 'alice' },
    });
    expect(ofCall(events, decided.call_id!, 'tool_call_started')).toHaveLength(1);
    const verified = runCli(['audit', 'verify', '--audit', fx.auditPath]);
    expect(verified.stdout).toMatch(/passkeys: ok, \d+ passkey approvals? checked/);

    // The same approval naming Alice as its approver (the chain re-hashed over it): audit verify names it.
    const dir = mkdtempSync(join(tmpdir(), 'skills-mcp-four-eyes-'));
    closers.push(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
    const copy = copyOf(fx.auditPath, dir, 'renamed.db');
    const eventId = exportedIds(copy).get(decided.call_id!) ?? -1;
    editEvidence(copy, eventId, (p) => (p.person = { name: 'bob', subject: 'alice' }), true);
    const bad = runCli(['audit', 'verify', '--audit', copy]);
    expect(bad.code).toBe(1);
    expect(bad.stdout + bad.stderr).toContain(
      'the approval names "bob" (subject "alice") as the approver, the passkey\'s enrolment',
    );

    // The passkey evidence left as it was, the decision's approver renamed to Alice: audit verify names it too.
    const copy2 = copyOf(fx.auditPath, dir, 'approver.db');
    editPayload(
      copy2,
      eventId,
      (p) => ((p.approver as { person: unknown }).person = { name: 'bob', subject: 'alice' }),
      true,
    );
    const bad2 = runCli(['audit', 'verify', '--audit', copy2]);
    expect(bad2.code).toBe(1);
    expect(bad2.stdout + bad2.stderr).toContain(
      'the approval names "bob" (subject "alice") as the approver, the passkey\'s enrolment',
    );

    // The approver person dropped from the evidence and the decision: a four-eyes approval must name it.
    expect((decided.payload as { passkey?: { four_eyes?: unknown } }).passkey?.four_eyes).toBe(true);
    const copy3 = copyOf(fx.auditPath, dir, 'nobody.db');
    editPayload(
      copy3,
      eventId,
      (p) => {
        delete p.approver;
        delete (p.passkey as { person?: unknown }).person;
      },
      true,
    );
    const bad3 = runCli(['audit', 'verify', '--audit', copy3]);
    expect(bad3.code).toBe(1);
    expect(bad3.stdout + bad3.stderr).toContain(
      'the call needed four eyes, and the approval names no enrolled person (with a subject) as its approver',
    );

    // The log says, when the call was asked, what its approval must hold: it needed a passkey and four eyes.
    expect(ofCall(events, decided.call_id!, 'approval_requested')[0]?.payload).toMatchObject({
      passkey_required: true,
      four_eyes_required: true,
    });
    // The evidence no longer marked as a four-eyes one (the chain re-hashed over it): audit verify names it.
    const copy4 = copyOf(fx.auditPath, dir, 'two-eyes.db');
    editEvidence(copy4, eventId, (p) => delete p.four_eyes, true);
    const bad4 = runCli(['audit', 'verify', '--audit', copy4]);
    expect(bad4.code).toBe(1);
    expect(bad4.stdout + bad4.stderr).toContain(
      `call ${decided.call_id} (event ${eventId}): the call needed four eyes, and its approval is not recorded as a four-eyes one`,
    );
    // The passkey assertion and the approver dropped altogether: an approval no passkey signed, named too.
    const copy5 = copyOf(fx.auditPath, dir, 'unsigned.db');
    editPayload(
      copy5,
      eventId,
      (p) => {
        delete p.approver;
        delete p.passkey;
      },
      true,
    );
    const bad5 = runCli(['audit', 'verify', '--audit', copy5]);
    expect(bad5.code).toBe(1);
    expect(bad5.stdout + bad5.stderr).toMatch(/^chain: ok/m);
    expect(bad5.stdout + bad5.stderr).toContain(
      `call ${decided.call_id} (event ${eventId}): the call needed a passkey approval, and its approval holds no passkey assertion`,
    );
    // The call recorded as Bob's own (the chain re-hashed over it): Bob approved his own call, and verify says so.
    const copy6 = copyOf(fx.auditPath, dir, 'own.db');
    const requestedId = runCli(['audit', 'export', '--jsonl', '--events-only', '--audit', copy6])
      .stdout.split('\n')
      .filter((l) => l.includes('"tool_call_requested"'))
      .map((l) => JSON.parse(l) as { event_id: number; call_id: string })
      .find((e) => e.call_id === decided.call_id)?.event_id;
    editPayload(copy6, requestedId ?? -1, (p) => ((p.caller as { subject: string }).subject = 'Bob'), true);
    const bad6 = runCli(['audit', 'verify', '--audit', copy6]);
    expect(bad6.code).toBe(1);
    expect(bad6.stdout + bad6.stderr).toMatch(/^chain: ok/m);
    expect(bad6.stdout + bad6.stderr).toContain(
      `call ${decided.call_id} (event ${eventId}): the call needed four eyes, and it was approved with the caller's own passkey`,
    );
  }, 120_000);

  it("refuses Alice's call approved with her own passkey: nothing runs, and the attempt is recorded", async () => {
    const alice = await personWithPasskey('alice');
    const call = await aliceCalls('alone');
    await approveWith(alice, call.link);
    const result = await call.result;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('the caller approved it with their own passkey');
    const events = auditEvents(fx.auditPath);
    const decided = events.filter((e) => e.type === 'approval_decided').at(-1)!;
    expect(decided.payload).toMatchObject({
      decision: 'denied',
      reason: 'self_approval',
      approver: { kind: 'console', person: { name: 'alice', subject: 'alice' } },
    });
    expect(ofCall(events, decided.call_id!, 'tool_call_started')).toHaveLength(0);
    expect(ofCall(events, decided.call_id!, 'tool_call_finished')[0]?.payload).toMatchObject({
      status: 'denied',
    });
  }, 120_000);
});

describe.skipIf(!HAS_CHROMIUM)('four eyes without a signed-in caller', () => {
  const startServer = consoleServers();

  it('refuses the call before anyone is asked (four_eyes_required)', async () => {
    const s = await startServer({ config: consoleConfig({ extra: FOUR_EYES }) });
    const result = await s.call({ text: 'nobody' }).result;
    expect(result.isError).toBe(true);
    expect(textOf(result)).toContain('requires approval by a person other than the caller');
    expect(s.decisions()).toEqual(['denied:denied:four_eyes_required:none']);
    expect(await pendingLinks(s.base)).toEqual([]);
  }, 60_000);
});
