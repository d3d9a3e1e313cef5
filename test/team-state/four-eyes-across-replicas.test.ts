import type { Client } from '@modelcontextprotocol/client';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExportedEvent } from '../../src/audit/parse-event-row.js';
import { HAS_CHROMIUM, sharedChromium } from '../console/helpers/browser.js';
import { consoleBase } from '../console/helpers/console-server.js';
import { freePort } from '../helpers/free-port.js';
import { startOidcIssuer, type OidcIssuer } from '../helpers/oidc-issuer.js';
import { connectClient } from '../http/helpers/connect-client.js';
import { enrollWith, pageWithPasskey } from '../passkeys/helpers/passkey-browser.js';
import { approvalLink } from '../team/helpers/shared-audit.js';
import { createAskedCall } from './helpers/create-asked-call.js';
import { consoleConfig, echo, type ToolResult } from './helpers/formless-client.js';
import { startTeam, type Team } from './helpers/team.js';

// Two replicas on one PostgreSQL log, callers signed in with a real OAuth issuer, `echo` needing four eyes: Alice's
// call waiting on B is approved with Bob's passkey in A's console. B must run it, and the log must say it needed
// four eyes, so that `audit verify` holds the approval to them.
const SCOPES = ['skills:read', 'skills:run'];

let idp: OidcIssuer;
let team: Team;
let resource: string;
const clients: Client[] = [];

const textOf = (r: ToolResult) =>
  (r.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');
const consoleOf = (name: string) => consoleBase(team.db.writerUrl, { XDG_STATE_HOME: team.stateHome(name) });
const pgEnv = () => ({ PGPASSWORD: team.db.writer.password, XDG_STATE_HOME: team.stateHome('cli') });
const askedCall = createAskedCall(() => team.events());
const decidedOf = (ev: ExportedEvent[], callId: string) =>
  ev.find((e) => e.call_id === callId && e.type === 'approval_decided');

describe.skipIf(!HAS_CHROMIUM)('four eyes across replicas', () => {
  const browser = sharedChromium();
  let bobsPage: Page;
  let close: () => Promise<void>;
  let urls: Record<'a' | 'b', string>;

  beforeAll(async () => {
    idp = await startOidcIssuer(
      [
        { id: 'alice', groups: [] },
        { id: 'bob', groups: [] },
      ],
      SCOPES,
    );
    // Both replicas serve one resource (the address a balancer would give them).
    resource = `http://127.0.0.1:${await freePort()}/mcp`;
    team = await startTeam(
      `${consoleConfig({ waitMs: 30_000, timeoutMs: 120_000 })}  require: { four_eyes: { skills: [echo] } }\n` +
        `http:\n  oauth:\n    issuer: ${idp.issuer}\n    resource: ${resource}\n`,
      { staticToken: false },
    );
    const alice = await idp.token('alice', SCOPES.join(' '), resource);
    const [a, b] = await Promise.all([team.start('a', alice), team.start('b', alice)]);
    urls = { a: a.url, b: b.url };
    const p = await pageWithPasskey(browser());
    bobsPage = p.page;
    close = () => p.context.close();
    await enrollWith(bobsPage, team.db.writerUrl, 'Bob', undefined, { env: pgEnv(), subject: 'bob' });
  }, 90_000);
  afterAll(async () => {
    await close?.();
    for (const c of clients) await c.close().catch(() => undefined);
    await team?.cleanup();
    await idp?.close();
  }, 30_000);

  it("runs Alice's call waiting on B once Bob approved it with his passkey in A's console, and verify holds it to four eyes", async () => {
    const alice = await connectClient(urls.b, 'legacy', await idp.token('alice', SCOPES.join(' '), resource));
    clients.push(alice.client);
    const result = echo(alice.client, 'raised on b by alice, approved on a by bob');
    const callId = await askedCall();
    await bobsPage.goto(await approvalLink(consoleOf('a'), callId));
    await bobsPage.getByRole('button', { name: 'Approve once' }).click();
    const r = await result;
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r.structuredContent).toEqual({
      echo: { text: 'raised on b by alice, approved on a by bob' },
      ok: true,
    });
    const ev = await team.events();
    expect(ev.filter((e) => e.call_id === callId).map((e) => e.type)).toContain('tool_call_started');
    expect(decidedOf(ev, callId)?.payload).toMatchObject({
      decision: 'approved',
      channel: 'console',
      approver: { person: { name: 'Bob', subject: 'bob' } },
      passkey: { person: { name: 'Bob', subject: 'bob' }, four_eyes: true },
    });
    const verified = team.verify();
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  }, 120_000);

  it("refuses Alice's call waiting on B approved with her own passkey in A's console: nothing runs", async () => {
    const own = await pageWithPasskey(browser());
    try {
      await enrollWith(own.page, team.db.writerUrl, 'Alice', undefined, { env: pgEnv(), subject: 'alice' });
      const alice = await connectClient(
        urls.b,
        'legacy',
        await idp.token('alice', SCOPES.join(' '), resource),
      );
      clients.push(alice.client);
      const result = echo(alice.client, 'alice approves her own call');
      const callId = await askedCall();
      await own.page.goto(await approvalLink(consoleOf('a'), callId));
      await own.page.getByRole('button', { name: 'Approve once' }).click();
      const r = await result;
      expect(r.isError).toBe(true);
      const ev = await team.eventsWhen('the call to end', (e) =>
        e.some((x) => x.call_id === callId && x.type === 'tool_call_finished'),
      );
      expect(ev.filter((e) => e.call_id === callId).map((e) => e.type)).not.toContain('tool_call_started');
      expect(decidedOf(ev, callId)?.payload).toMatchObject({ decision: 'denied', reason: 'self_approval' });
    } finally {
      await own.context.close();
    }
  }, 120_000);
});
