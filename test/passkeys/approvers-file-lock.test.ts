import { spawnSync } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { fileApproverStore } from '../../src/passkeys/approver-store.js';
import { readApprovers, writeApprovers, type ApproverCredential } from '../../src/passkeys/approvers-file.js';
import { tempDir } from '../helpers/temp-dir.js';

const credential = (id: string): ApproverCredential => ({
  id,
  public_key: 'pQECAyYgASFYIA',
  counter: 3,
  label: `passkey ${id}`,
  transports: [],
  enrolled_at: '2026-12-07T12:00:00.000Z',
});

describe('the approvers.json store', () => {
  const dirs: (() => void)[] = [];
  afterEach(() => dirs.splice(0).forEach((c) => c()));
  const stateDir = () => {
    const t = tempDir();
    dirs.push(t.cleanup);
    return t.dir;
  };

  it('never brings back a removed passkey when a counter update reads the list before the removal writes it', async () => {
    const dir = stateDir();
    writeApprovers(dir, [credential('AAAA'), credential('BBBB')]);
    // Two stores on one folder, as `approvers remove` and the server each have: the removal starts first, the
    // counter update (an assertion verified meanwhile) right after, before either has written.
    const cli = fileApproverStore(dir);
    const server = fileApproverStore(dir);
    const [removed] = await Promise.all([cli.remove('AAAA'), server.setCounter('AAAA', 9)]);
    expect(removed).toBe(true);
    expect(readApprovers(dir).map((a) => a.id)).toEqual(['BBBB']);
    // And the other way round: the update lands, the removal still removes.
    await Promise.all([server.setCounter('BBBB', 4), cli.remove('BBBB')]);
    expect(readApprovers(dir)).toEqual([]);
    expect(existsSync(`${dir}/approvers.json.lock`)).toBe(false);
  });

  it('takes over the lock of a process that is gone', async () => {
    const dir = stateDir();
    writeApprovers(dir, [credential('AAAA')]);
    const gone = spawnSync(process.execPath, ['-e', '']).pid;
    writeFileSync(`${dir}/approvers.json.lock`, `${gone}\n`);
    expect(await fileApproverStore(dir).remove('AAAA')).toBe(true);
    expect(readApprovers(dir)).toEqual([]);
  });
});
