import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeTestSkill } from '../helpers/gated-fixture.js';
import { approveEvery, gatedServers } from '../helpers/gated-server.js';
import { runCli } from '../helpers/run-cli.js';

const BLOAT = `import os
out = os.path.dirname(os.environ["SKILL_FILES_DIR"])
with open(os.path.join(out, "beside-files.bin"), "wb") as f:
    f.write(b"x" * (3 * 1024 * 1024))
open(os.path.join(os.environ["SKILL_FILES_DIR"], "small.txt"), "w").write("small")
print("{}")
`;

describe('per-call folders (built binary, real sandbox)', () => {
  const start = gatedServers();

  it('keeps only files/ after a call, drops the raw input, enforces the quota on the whole folder, and prunes', async () => {
    const { fx, c } = await start('approval:\n  mode: ask\nruns:\n  max_call_bytes: 1048576\n', {
      era: 'legacy',
      setup: (f) =>
        writeTestSkill(f.skills, 'bloat', {
          description: 'Writes a big file beside its files folder. Use in tests.',
          script: BLOAT,
        }),
    });
    approveEvery(c);
    const runs = join(dirname(fx.auditPath), 'runs');
    const folders = () => readdirSync(runs).filter((n) => n.startsWith('skills-mcp-out-'));

    const ok = await c.client.callTool({ name: 'writer', arguments: { secret_note: 'raw input value' } });
    expect(ok.isError).toBeFalsy();
    const [first] = folders();
    expect(readdirSync(join(runs, first!))).toEqual(['files']);
    expect(readdirSync(join(runs, first!, 'files'))).toEqual(['out.txt']);

    // Over the quota, nothing of the call is kept: its emptied folder goes too.
    const big = await c.client.callTool({ name: 'bloat', arguments: {} });
    expect(big.isError).toBeFalsy();
    expect(folders()).toEqual([first]);
    // A call that makes no files leaves no folder.
    const echo = await c.client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    expect(echo.isError).toBeFalsy();
    expect(folders()).toEqual([first]);
    await c.close();

    const dry = runCli(['runs', 'prune', '--older-than', '0', '--dry-run', '--audit', fx.auditPath]).stdout;
    expect(dry).toMatch(/^would remove 1 call folders? older than 0 days/);
    expect(folders()).toHaveLength(1);
    const pruned = runCli(['runs', 'prune', '--older-than', '0', '--audit', fx.auditPath]).stdout;
    expect(pruned).toMatch(/^removed 1 call folders?/);
    expect(existsSync(join(runs, first!))).toBe(false);
    expect(folders()).toEqual([]);
  });
});
