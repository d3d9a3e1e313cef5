import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { ARTIFACTS, HAS_CHROMIUM, sharedChromium } from '../console/helpers/browser.js';
import { consoleServers, textOf } from '../console/helpers/console-server.js';
import { postDecision } from '../console/helpers/raw-request.js';
import { enrollWith, pageWithPasskey } from './helpers/passkey-browser.js';

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
    // passkeys line: see audit verify
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
