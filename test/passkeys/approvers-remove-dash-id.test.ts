import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/temp-dir.js';

/** Credential ids are base64url: some start with `-`, which a parser takes for an option. */
const DASH_ID = '-Zq3vJ9kLm2NpQr5StUvWxY';
const OTHER_ID = 'AbCdEfGhIjKlMnOpQrStUvW';

const approver = (id: string, label: string) => ({
  id,
  public_key: 'pQECAyYgASFYIA',
  counter: 0,
  label,
  transports: [],
  enrolled_at: '2026-12-07T20:00:00.000Z',
});

describe('skills-mcp approvers remove', () => {
  const cleanups: (() => void)[] = [];
  afterEach(() => {
    for (const c of cleanups.splice(0)) c();
  });

  function seeded() {
    const t = tempDir();
    cleanups.push(t.cleanup);
    mkdirSync(t.dir, { recursive: true });
    writeFileSync(
      join(t.dir, 'approvers.json'),
      JSON.stringify({
        version: 1,
        approvers: [approver(DASH_ID, 'dash key'), approver(OTHER_ID, 'other key')],
      }),
      { mode: 0o600 },
    );
    return join(t.dir, 'audit.db');
  }

  it('removes a passkey whose id starts with "-", given as the id after remove', () => {
    const auditPath = seeded();
    const removed = runCli(['approvers', 'remove', DASH_ID, '--audit', auditPath]);
    expect(removed.stderr).toBe('');
    expect(removed.code).toBe(0);
    expect(removed.stdout).toBe(`removed ${DASH_ID} (dash key)\n`);
    const listed = runCli(['approvers', 'list', '--audit', auditPath]).stdout;
    expect(listed).not.toContain(DASH_ID);
    expect(listed).toContain(OTHER_ID);
  });

  it('removes it by a prefix starting with "-", with the global flags before the verb', () => {
    const auditPath = seeded();
    const removed = runCli(['approvers', '--audit', auditPath, 'remove', DASH_ID.slice(0, 8)]);
    expect(removed.code, removed.stderr).toBe(0);
    expect(removed.stdout).toBe(`removed ${DASH_ID} (dash key)\n`);
  });

  it('still reads -h after remove as the help flag', () => {
    const auditPath = seeded();
    const help = runCli(['approvers', 'remove', '-h', '--audit', auditPath]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: skills-mcp approvers');
    expect(runCli(['approvers', 'list', '--audit', auditPath]).stdout).toContain(DASH_ID);
  });
});
