import { describe, expect, it } from 'vitest';
import { startRawServer, type RawEra } from '../helpers/raw-stdio.js';
import { repoRoot } from '../helpers/temp-dir.js';
import { once } from 'node:events';

const args = ['--skills', `${repoRoot}/skills`, '--no-watch'];

describe.each<RawEra>(['legacy', 'modern'])('stdio exit codes, %s era', (era) => {
  it('exits 0 when stdin closes', async () => {
    const s = await startRawServer(era, [...args, '--log-level', 'info']);
    expect(await s.end()).toBe(0);
    expect(s.stderr()).toContain('"msg":"stopped"');
  });

  it('exits 0 on SIGTERM', async () => {
    const s = await startRawServer(era, args);
    const closed = once(s.child, 'close') as Promise<[number | null]>;
    s.child.kill('SIGTERM');
    expect((await closed)[0]).toBe(0);
  });

  it('exits 1, naming EPIPE on stderr, when the client closes its end of stdout and the server must answer', async () => {
    const s = await startRawServer(era, args);
    const closed = once(s.child, 'close') as Promise<[number | null]>;
    s.child.stdout.destroy();
    await s.write(s.line('after-close', 'tools/list'));
    expect((await closed)[0]).toBe(1);
    expect(s.stderr()).toContain('skills-mcp: stopped: the stdio transport failed: write EPIPE');
    expect(s.stderr()).toMatch(/"level":50,.*"code":"EPIPE".*"msg":"stdio transport failed"/);
  });
});
