import type { Client } from '@modelcontextprotocol/client';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExportedEvent } from '../../src/audit/parse-event-row.js';
import { HAS_CHROMIUM, sharedChromium } from '../console/helpers/browser.js';
import { consoleBase } from '../console/helpers/console-server.js';
import { enrollWith, pageWithPasskey } from '../passkeys/helpers/passkey-browser.js';
import { runCli } from '../helpers/run-cli.js';
import { approvalLink } from '../team/helpers/shared-audit.js';
import { consoleConfig, echo, formlessClient, type ToolResult } from './helpers/formless-client.js';
import { createAskedCall } from './helpers/create-asked-call.js';
import { startTeam, type Team } from './helpers/team.js';

// Two real server processes on one PostgreSQL database, each with its approval console, every call needing a
// passkey. The passkey is enrolled once, in the database: each replica's console accepts it; removed once, each
// refuses the calls it would have approved.
let team: Team;
let urls: Record<'a' | 'b', string>;
const clients: Client[] = [];

const textOf = (r: ToolResult) =>
  (r.content as { type: string; text?: string }[]).map((c) => c.text ?? '').join('\n');

const consoleOf = (name: string) => consoleBase(team.db.writerUrl, { XDG_STATE_HOME: team.stateHome(name) });
/** The CLI's environment: the writer's password, and a state folder of its own (no replica's). */
const pgEnv = () => ({ PGPASSWORD: team.db.writer.password, XDG_STATE_HOME: team.stateHome('cli') });

/** The call id of the next approval asked (calls are made one after the other). */
const askedCall = createAskedCall(() => team.events());

const decidedOf = (ev: ExportedEvent[], callId: string) =>
  ev.find((e) => e.call_id === callId && e.type === 'approval_decided');

describe.skipIf(!HAS_CHROMIUM)('passkeys enrolled in the database shared by the replicas', () => {
  const browser = sharedChromium();
  let page: Page;
  let close: () => Promise<void>;

  beforeAll(async () => {
    team = await startTeam(`${consoleConfig({ waitMs: 30_000, timeoutMs: 120_000 })}  require: passkey\n`);
    const [a, b] = await Promise.all([team.start('a'), team.start('b')]);
    urls = { a: a.url, b: b.url };
    const p = await pageWithPasskey(browser());
    page = p.page;
    close = () => p.context.close();
  }, 90_000);
  afterAll(async () => {
    await close?.();
    for (const c of clients) await c.close().catch(() => undefined);
    await team?.cleanup();
  }, 30_000);

  /** A call on `replica`, approved with the passkey in the console of `via` (by default the same replica's). */
  const approvedOn = async (replica: 'a' | 'b', text: string, via: 'a' | 'b' = replica) => {
    const client = await formlessClient(urls[replica], clients);
    const result = echo(client, text);
    const callId = await askedCall();
    await page.goto(await approvalLink(consoleOf(via), callId));
    await page.getByRole('button', { name: 'Approve once' }).click();
    return { result: await result, callId };
  };

  it('accepts a passkey enrolled once in every replica’s console, for its own calls and the other’s, and removal refuses it on both', async () => {
    await enrollWith(page, team.db.writerUrl, 'alice', undefined, { env: pgEnv() });
    const listed = runCli(['approvers', 'list', '--audit', team.db.writerUrl], { env: pgEnv() });
    const id = /^(\S+)\s+alice\s/m.exec(listed.stdout)?.[1];
    expect(id, listed.stdout + listed.stderr).toBeDefined();

    for (const replica of ['a', 'b'] as const) {
      const { result, callId } = await approvedOn(replica, `approved on ${replica}`);
      expect(result.isError, textOf(result)).toBeFalsy();
      expect(result.structuredContent).toEqual({ echo: { text: `approved on ${replica}` }, ok: true });
      const decided = decidedOf(await team.events(), callId);
      expect(decided?.payload).toMatchObject({
        decision: 'approved',
        channel: 'console',
        passkey: { credential_id: id, person: { name: 'alice' } },
      });
    }

    // Raised on B, approved with the passkey in A's console: B runs it once the signed decision is in the log.
    const across = await approvedOn('b', 'raised on b, approved on a', 'a');
    expect(across.result.isError, textOf(across.result)).toBeFalsy();
    expect(across.result.structuredContent).toEqual({
      echo: { text: 'raised on b, approved on a' },
      ok: true,
    });
    const ev = (await team.events()).filter((e) => e.call_id === across.callId);
    expect(ev.map((e) => e.type)).toContain('tool_call_started');
    expect(decidedOf(ev, across.callId)?.payload).toMatchObject({
      decision: 'approved',
      channel: 'console',
      passkey: { credential_id: id },
    });

    const removed = runCli(['approvers', 'remove', '--audit', team.db.writerUrl, '--', id!], {
      env: pgEnv(),
    });
    expect(removed.code, removed.stderr).toBe(0);
    for (const replica of ['a', 'b'] as const) {
      const client = await formlessClient(urls[replica], clients);
      const r = await echo(client, `after removal on ${replica}`);
      expect(r.isError).toBe(true);
      expect(textOf(r)).toContain('requires a passkey approval');
      const ev = await team.events();
      const refused = ev.filter(
        (e) =>
          e.type === 'approval_decided' && (e.payload as { reason?: string }).reason === 'passkey_required',
      );
      expect(refused.length).toBe(replica === 'a' ? 1 : 2);
    }
  }, 180_000);
});
