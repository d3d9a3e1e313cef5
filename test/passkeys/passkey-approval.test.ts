import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { ARTIFACTS, HAS_CHROMIUM, sharedChromium } from '../console/helpers/browser.js';
import { consoleServers, textOf } from '../console/helpers/console-server.js';
import { postDecision } from '../console/helpers/raw-request.js';
import { enrollWith, pageWithPasskey } from './helpers/passkey-browser.js';
import { copyOf, editEvidence } from './helpers/audit-copy.js';

interface ExportLine {
  event_id: number;
  call_id: string | null;
  type: string;
  payload: Record<string, unknown>;
}

const exported = (auditPath: string): ExportLine[] =>
  runCli(['audit', 'export', '--jsonl', '--events-only', '--audit', auditPath])
    .stdout.split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as ExportLine);

/** Another signature of the same length and alphabet. */
const otherSignature = (s: string) => `${s.slice(0, 20)}${s[20] === 'A' ? 'B' : 'A'}${s.slice(21)}`;

/** The `approval_decided` payloads in the audit log, from `audit export`. */
function decidedPayloads(auditPath: string): Record<string, unknown>[] {
  const out = runCli(['audit', 'export', '--jsonl', '--audit', auditPath]).stdout;
  return out
    .split('\n')
    .filter((l) => l.includes('"approval_decided"'))
    .map((l) => (JSON.parse(l) as { payload: Record<string, unknown> }).payload);
}

describe.skipIf(!HAS_CHROMIUM)('approving in the console with a passkey', () => {
  const browser = sharedChromium();
  const startServer = consoleServers();
  const closers: (() => Promise<void>)[] = [];
  afterEach(async () => {
    for (const c of closers.splice(0)) await c();
  });

  it('runs a call approved with the enrolled passkey, and the log holds the assertion that verifies', async () => {
    const s = await startServer();
    const { context, page } = await pageWithPasskey(browser());
    closers.push(() => context.close());
    await enrollWith(page, s.fx.auditPath, 'alice');
    const call = s.call({ text: 'signed' });
    await page.goto(await call.link);
    await page.getByRole('button', { name: 'Approve once' }).waitFor();
    expect(new URL(page.url()).hostname).toBe('localhost');
    await page.screenshot({ path: join(ARTIFACTS, 'passkey-approval.png') });
    await page.getByRole('button', { name: 'Approve once' }).click();
    await page
      .getByText(/Approved once|Not approved: |Not accepted|Confirm with/)
      .first()
      .waitFor();
    expect(await page.getByText(/^Not approved: /).count(), await page.locator('main').innerText()).toBe(0);
    const result = await call.result;
    expect(result.isError, textOf(result)).toBeFalsy();
    expect(textOf(result)).toContain('signed');
    const [decided] = decidedPayloads(s.fx.auditPath);
    const passkey = decided?.passkey as Record<string, unknown> | undefined;
    expect(passkey?.credential_id).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(passkey?.signature).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(passkey?.challenge).toMatchObject({ decision: 'approved', approval_key: decided?.approval_key });
    const verified = runCli(['audit', 'verify', '--audit', s.fx.auditPath]);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toContain(
      'passkeys: ok, 1 passkey approval checked against 1 passkey enrolled in the log',
    );
  }, 90_000);

  it('records the enrolment, and audit verify names a passkey approval that does not verify', async () => {
    const s = await startServer();
    const { context, page } = await pageWithPasskey(browser());
    closers.push(() => context.close());
    await enrollWith(page, s.fx.auditPath, 'alice');
    const approvers = JSON.parse(readFileSync(join(s.fx.auditPath, '..', 'approvers.json'), 'utf8')) as {
      approvers: { id: string; public_key: string }[];
    };
    const [enrolledKey] = approvers.approvers;
    const enrolment = exported(s.fx.auditPath).find((e) => e.type === 'approver_enrolled');
    expect(enrolment?.payload).toMatchObject({
      credential_id: enrolledKey!.id,
      public_key: enrolledKey!.public_key,
      name: 'alice',
    });
    const call = s.call({ text: 'signed' });
    await page.goto(await call.link);
    await page.getByRole('button', { name: 'Approve once' }).click();
    expect((await call.result).isError).toBeFalsy();
    const decided = exported(s.fx.auditPath).find((e) => e.type === 'approval_decided')!;
    const at = `call ${decided.call_id} (event ${decided.event_id})`;
    const dir = mkdtempSync(join(tmpdir(), 'skills-mcp-passkey-verify-'));
    closers.push(() => Promise.resolve(rmSync(dir, { recursive: true, force: true })));
    const verify = (path: string) => {
      const r = runCli(['audit', 'verify', '--audit', path]);
      return { code: r.code, text: r.stdout + r.stderr };
    };
    // Untouched, the copy's passkey approval verifies (the copy has no anchor file: that alone fails it).
    expect(verify(copyOf(s.fx.auditPath, dir, 'same.db')).text).toContain('passkeys: ok, 1 passkey approval');

    // Another signature, the chain re-hashed over it: the chain holds, the passkey check does not.
    const signed = copyOf(s.fx.auditPath, dir, 'signature.db');
    editEvidence(signed, decided.event_id, (p) => (p.signature = otherSignature(String(p.signature))), true);
    const bad = verify(signed);
    expect(bad.code).toBe(1);
    expect(bad.text).toMatch(/^chain: ok/m);
    expect(bad.text).toContain('passkeys: 1 FAILED (1 passkey approval checked against 1 passkey enrolled');
    expect(bad.text).toContain(`  ${at}: the signature does not verify with the enrolled public key`);

    // The same edit without re-hashing: the chain breaks there, and the passkey failure is still named.
    const unhashed = copyOf(s.fx.auditPath, dir, 'unhashed.db');
    editEvidence(
      unhashed,
      decided.event_id,
      (p) => (p.signature = otherSignature(String(p.signature))),
      false,
    );
    const broken = verify(unhashed);
    expect(broken.code).toBe(1);
    expect(broken.text).toContain(`chain: BROKEN at event ${decided.event_id}`);
    expect(broken.text).toContain(`  ${at}: `);

    // The console's origin is recorded with the assertion; the assertion made on another origin than it fails.
    const origin = (decided.payload.passkey as { console_origin?: string }).console_origin;
    expect(origin).toMatch(/^http:\/\/localhost:\d+$/);
    const moved = copyOf(s.fx.auditPath, dir, 'origin.db');
    const port = Number(new URL(origin!).port);
    editEvidence(
      moved,
      decided.event_id,
      (p) => (p.console_origin = `http://localhost:${port === 1 ? 2 : port - 1}`),
      true,
    );
    const elsewhere = verify(moved);
    expect(elsewhere.code).toBe(1);
    expect(elsewhere.text).toContain(
      `  ${at}: it was made on ${origin}, the approval console was at http://localhost:`,
    );

    // An assertion by a credential the log never enrolled.
    const stranger = copyOf(s.fx.auditPath, dir, 'stranger.db');
    editEvidence(stranger, decided.event_id, (p) => (p.credential_id = 'bm90LWVucm9sbGVk'), true);
    const unknown = verify(stranger);
    expect(unknown.code).toBe(1);
    expect(unknown.text).toContain(`  ${at}: passkey bm90LWVucm9sbGVk is not enrolled in the log`);
  }, 90_000);

  it('refuses an approving form post without a passkey assertion: nothing runs', async () => {
    const s = await startServer();
    const enrolled = await pageWithPasskey(browser());
    closers.push(() => enrolled.context.close());
    await enrollWith(enrolled.page, s.fx.auditPath, 'alice');
    const call = s.call({ text: 'never' });
    const link = await call.link;
    // The form without JavaScript (or the model's HTTP client with the page's token).
    const posted = await postDecision(link, 'approved');
    expect(posted.status).toBe(403);
    expect(s.decisions()).toEqual(['requested:-:-:console']);
  }, 90_000);
});
