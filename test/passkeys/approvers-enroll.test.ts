import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/temp-dir.js';
import { ARTIFACTS, HAS_CHROMIUM, sharedChromium, watchErrors } from '../console/helpers/browser.js';
import { enrollWith } from './helpers/passkey-browser.js';

describe.skipIf(!HAS_CHROMIUM)('skills-mcp approvers', () => {
  const browser = sharedChromium();
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  it('enrolls a passkey from the page it links on the terminal, then lists and removes it', async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const auditPath = join(t.dir, 'audit.db');
    const { context, page } = await (await import('./helpers/passkey-browser.js')).pageWithPasskey(browser());
    const errors = watchErrors(page);
    const e = await enrollWith(page, auditPath, 'alice laptop', join(ARTIFACTS, 'passkey-enroll.png'));
    await page.screenshot({ path: join(ARTIFACTS, 'passkey-enrolled.png') });
    // The one-off link is spent: the page offers nothing more to click.
    expect(await page.locator('#enroll').isVisible()).toBe(false);
    await context.close();
    expect(await e.exited).toBe(0);
    expect(e.stdout()).toMatch(/^enrolled [A-Za-z0-9_-]+ \(alice laptop\)/);
    expect(errors).toEqual([]);
    const file = join(t.dir, 'approvers.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { approvers: { id: string; label: string }[] };
    expect(stored.approvers).toHaveLength(1);
    expect(stored.approvers[0]!.label).toBe('alice laptop');
    const id = stored.approvers[0]!.id;
    const listed = runCli(['approvers', 'list', '--audit', auditPath]);
    expect(listed.stdout).toContain(`${id}  alice laptop`);
    // The link is the one secret of the enrolment: never on stdout.
    expect(e.stdout()).not.toContain(e.url);
    const removed = runCli(['approvers', 'remove', id, '--audit', auditPath]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(runCli(['approvers', 'list', '--audit', auditPath]).stdout).toBe('');
    // Both are in the audit log, with the key: what `audit verify` checks passkey approvals against.
    const events = runCli(['audit', 'export', '--jsonl', '--events-only', '--audit', auditPath])
      .stdout.split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l) as { type: string; payload: Record<string, unknown> });
    const key = { credential_id: id, name: 'alice laptop' };
    expect(events.find((e) => e.type === 'approver_enrolled')?.payload).toMatchObject(key);
    expect(events.find((e) => e.type === 'approver_removed')?.payload).toMatchObject(key);
  }, 60_000);
});
