import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/temp-dir.js';
import { HAS_CHROMIUM, sharedChromium } from '../console/helpers/browser.js';
import { pageWithPasskey, startEnroll } from './helpers/passkey-browser.js';

// The enrolment link is one-off: once a passkey is enrolled on it, a second browser holding the same link (another
// authenticator) enrolls nothing more, however soon after it asks (the listener closes a moment later).
describe.skipIf(!HAS_CHROMIUM)('the one-off enrolment link', () => {
  const browser = sharedChromium();
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const c of cleanups.splice(0)) await c();
  });

  it('enrolls one passkey only, even when a second browser asks right after the first was enrolled', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const auditPath = join(t.dir, 'audit.db');
    const person = await pageWithPasskey(browser());
    const other = await pageWithPasskey(browser());
    cleanups.push(
      () => person.context.close(),
      () => other.context.close(),
    );
    const e = await startEnroll(auditPath, 'alice');
    cleanups.push(() => void e.child.kill());
    await person.page.goto(e.url);
    await other.page.goto(e.url);
    const otherButton = other.page.getByRole('button', { name: 'Create passkey' });
    await otherButton.waitFor();

    // The second browser asks the moment the person's enrolment is answered.
    const finished = person.page.waitForResponse((r) => r.url().endsWith('/enroll/finish'));
    await person.page.getByRole('button', { name: 'Create passkey' }).click();
    expect((await finished).status()).toBe(200);
    const otherFinish = other.page
      .waitForResponse((r) => r.url().endsWith('/enroll/finish') || r.url().endsWith('/enroll/options'), {
        timeout: 5_000,
      })
      .catch(() => undefined);
    await otherButton.click();
    await otherFinish;
    await person.page
      .locator('#enroll-status')
      .getByText(/^Enrolled/)
      .waitFor();
    // Refused as used up while the listener still answers (a connection refused once it closed).
    await other.page
      .locator('#enroll-status')
      .getByText(/^Not enrolled: /)
      .waitFor({ timeout: 5_000 });
    expect(await e.exited).toBe(0);

    const stored = JSON.parse(readFileSync(join(t.dir, 'approvers.json'), 'utf8')) as {
      approvers: { id: string }[];
    };
    expect(stored.approvers.map((a) => a.id)).toEqual([/^enrolled (\S+) /.exec(e.stdout())![1]]);
    const enrolled = runCli(['audit', 'export', '--jsonl', '--events-only', '--audit', auditPath])
      .stdout.split('\n')
      .filter((l) => l.includes('"approver_enrolled"'));
    expect(enrolled).toHaveLength(1);
  }, 60_000);
});
