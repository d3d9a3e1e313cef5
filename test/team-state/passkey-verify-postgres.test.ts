import type { Client } from '@modelcontextprotocol/client';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HAS_CHROMIUM, sharedChromium } from '../console/helpers/browser.js';
import { consoleBase } from '../console/helpers/console-server.js';
import { enrollWith, pageWithPasskey } from '../passkeys/helpers/passkey-browser.js';
import { runCli } from '../helpers/run-cli.js';
import { approvalLink } from '../team/helpers/shared-audit.js';
import { consoleConfig, echo, formlessClient } from './helpers/formless-client.js';
import { rewritePgEvent } from './helpers/rewrite-pg-event.js';
import { startTeam, type Team } from './helpers/team.js';

// A replica on a PostgreSQL log, every call needing a passkey: the enrolment is an event of the log (with the table
// row, in one transaction), and `audit verify` checks the passkey approval against it, as on SQLite.
let team: Team;
let url: string;
const clients: Client[] = [];
const pgEnv = () => ({ PGPASSWORD: team.db.writer.password, XDG_STATE_HOME: team.stateHome('cli') });

/** SQL as the server's own database role (what a holder of its password can do). */
const asWriter = (sql: string, values: unknown[] = []) =>
  team.pg.as(team.db.writer, team.db.database, (c) => c.query(sql, values));

describe.skipIf(!HAS_CHROMIUM)('audit verify of passkey approvals on a PostgreSQL log', () => {
  const browser = sharedChromium();
  let page: Page;
  let close: () => Promise<void>;

  beforeAll(async () => {
    team = await startTeam(`${consoleConfig({ waitMs: 30_000, timeoutMs: 120_000 })}  require: passkey\n`);
    url = (await team.start('a')).url;
    const p = await pageWithPasskey(browser());
    page = p.page;
    close = () => p.context.close();
  }, 90_000);
  afterAll(async () => {
    await close?.();
    for (const c of clients) await c.close().catch(() => undefined);
    await team?.cleanup();
  }, 30_000);

  it('checks the approval against the enrolment event, names a passkey row no enrolment backs, and fails an edited assertion', async () => {
    await enrollWith(page, team.db.writerUrl, 'alice', undefined, { env: pgEnv() });
    const enrolled = (await team.events()).filter((e) => e.type === 'approver_enrolled');
    expect(enrolled).toHaveLength(1);
    const id = (enrolled[0]!.payload as { credential_id: string }).credential_id;

    const client = await formlessClient(url, clients);
    const result = echo(client, 'approved with a passkey');
    const asked = await team.eventsWhen('the approval to be asked', (ev) =>
      ev.some((e) => e.type === 'approval_requested'),
    );
    const callId = asked.find((e) => e.type === 'approval_requested')!.call_id!;
    await page.goto(
      await approvalLink(consoleBase(team.db.writerUrl, { XDG_STATE_HOME: team.stateHome('a') }), callId),
    );
    await page.getByRole('button', { name: 'Approve once' }).click();
    expect((await result).isError).toBeFalsy();

    const ok = team.verify();
    expect(ok.code, ok.stdout + ok.stderr).toBe(0);
    expect(ok.stdout).toContain(
      'passkeys: ok, 1 passkey approval checked against 1 passkey enrolled in the log',
    );
    expect(ok.stdout).toContain('approvers table: ok, each passkey in it is enrolled in the log');

    // The server's role inserts a passkey of its own straight into the table: verify names it.
    const forged = 'Zm9yZ2VkLXBhc3NrZXk';
    await asWriter(
      `INSERT INTO skills_mcp.approvers (credential_id, record)
       SELECT $1, jsonb_set(jsonb_set(record, '{id}', to_jsonb($1::text)), '{label}', '"mallory"')
       FROM skills_mcp.approvers WHERE credential_id = $2`,
      [forged, id],
    );
    const planted = team.verify();
    expect(planted.code, planted.stdout).toBe(1);
    expect(planted.stderr).toContain(
      `passkey ${forged}: no enrolment in the log backs it (inserted into the table directly?)`,
    );
    await asWriter('DELETE FROM skills_mcp.approvers WHERE credential_id = $1', [forged]);

    // Removal is an event of the log too; the approval made before it still verifies.
    const removed = runCli(['approvers', 'remove', '--audit', team.db.writerUrl, '--', id], { env: pgEnv() });
    expect(removed.code, removed.stderr).toBe(0);
    const ev = await team.events();
    expect(ev.filter((e) => e.type === 'approver_removed').map((e) => e.payload)).toMatchObject([
      { credential_id: id, name: 'alice' },
    ]);
    expect(team.verify().code).toBe(0);

    // The assertion of the decision edited in the database, the chain re-hashed so it links: the signature tells.
    const decided = ev.find((e) => e.call_id === callId && e.type === 'approval_decided')!;
    await rewritePgEvent(team.pg, team.db, decided.event_id, (p) => {
      const passkey = p.passkey as { signature: string };
      const s = passkey.signature;
      passkey.signature = `${s.slice(0, 10)}${s[10] === 'A' ? 'B' : 'A'}${s.slice(11)}`;
    });
    const edited = team.verify();
    expect(edited.code, edited.stdout).toBe(1);
    expect(edited.stderr).toContain('chain: ok');
    expect(edited.stderr).toContain('passkeys: 1 FAILED');
    expect(edited.stderr).toContain(`call ${callId} (event ${decided.event_id})`);
  }, 180_000);
});
