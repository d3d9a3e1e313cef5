import { describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/cli/doctor.js';
import type { CliIo } from '../../src/cli/io.js';

function io(): CliIo & { stdout: () => string } {
  let out = '';
  return {
    out: (t) => (out += t),
    err: () => {},
    env: process.env,
    cwd: process.cwd(),
    stdinIsTTY: false,
    stdout: () => out,
  };
}

// What Node throws when a native module was built for another line (here: Node 24's ABI, 137).
const builtForNode24 = {
  ok: false as const,
  error: new Error(
    "The module '/app/node_modules/better-sqlite3/build/Release/better_sqlite3.node'\n" +
      'was compiled against a different Node.js version using\n' +
      'NODE_MODULE_VERSION 137. This version of Node.js requires\n' +
      `NODE_MODULE_VERSION ${process.versions.modules}. Please try re-compiling or re-installing\n` +
      'the module (for instance, using `npm rebuild` or `npm install`).',
  ),
};
const notBuilt =
  'better-sqlite3 cannot be loaded: its native module /app/node_modules/better-sqlite3/build/Release/better_sqlite3.node was built for NODE_MODULE_VERSION 137 (Node 24)';

describe("skills-mcp doctor: the audit log's SQLite binding", () => {
  it('names better-sqlite3 when its native module loads in this Node (npm install built it for this one)', async () => {
    const c = io();
    await runDoctor(['--json'], c);
    expect(JSON.parse(c.stdout()).auditSqlite).toMatchObject({
      auto: 'better-sqlite3',
      betterSqlite3: { loads: true },
    });
    const t = io();
    await runDoctor([], t);
    expect(t.stdout()).toMatch(/^ {2}audit sqlite {2}better-sqlite3$/m);
  }, 60_000);

  it('names node:sqlite, and why not better-sqlite3, when better-sqlite3 was built for another Node', async () => {
    const c = io();
    const loaders = {
      loadBetterSqlite3: () => builtForNode24,
      loadNodeSqlite: () => ({ DatabaseSync: class {} }),
    };
    await runDoctor([], c, {}, loaders);
    expect(c.stdout()).toContain(
      `  audit sqlite  node:sqlite (${notBuilt}, and this is Node ${process.version}`,
    );
    expect(c.stdout()).not.toMatch(/^ {2}fix .*npm rebuild/m);
  }, 60_000);

  it('says the audit log cannot open, and the fix, when neither binding is here', async () => {
    const c = io();
    await runDoctor(
      ['--json'],
      c,
      {},
      { loadBetterSqlite3: () => builtForNode24, loadNodeSqlite: () => undefined },
    );
    const probe = JSON.parse(c.stdout()).auditSqlite;
    expect(probe.auto).toBeUndefined();
    expect(probe).toMatchObject({ betterSqlite3: { loads: false }, nodeSqlite: false });
    const t = io();
    await runDoctor([], t, {}, { loadBetterSqlite3: () => builtForNode24, loadNodeSqlite: () => undefined });
    expect(t.stdout()).toContain(`  audit sqlite  NOT AVAILABLE: ${notBuilt}`);
    expect(t.stdout()).toMatch(/^ {2}fix {11}Run `npm rebuild better-sqlite3` with this Node/m);
  }, 60_000);
});
