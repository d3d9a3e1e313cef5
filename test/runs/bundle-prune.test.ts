import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gatedFixture } from '../helpers/gated-fixture.js';
import { runCli } from '../helpers/run-cli.js';
import { connectStdio, type Connected } from '../helpers/stdio-client.js';
import { waitFor } from '../helpers/wait-for.js';

const CONFIG = 'approval:\n  mode: allow\n  fallback: rules-only\n';
const HEX64 = /^[0-9a-f]{64}$/;
const DAY_S = 24 * 60 * 60;

/** Waits until its files folder holds `go`, then prints a file of its own copy. */
const WAITER = `import json, os, pathlib, time
files = os.environ["SKILL_FILES_DIR"]
pathlib.Path(files, "started").write_text("1")
while not os.path.exists(os.path.join(files, "go")):
    time.sleep(0.02)
helper = open(os.path.join(os.environ["SKILL_DIR"], "scripts", "helper.txt")).read()
print(json.dumps({"helper": helper}))
`;

const backdate = (path: string, days: number) => {
  const t = Date.now() / 1000 - days * DAY_S;
  utimesSync(path, t, t);
};

describe('bundle copies are pruned, never while in use (built binary)', () => {
  let fx: ReturnType<typeof gatedFixture> | undefined;
  let c: Connected | undefined;
  afterEach(async () => {
    await c?.close();
    // Sealed copies are read-only folders: open them up so the temp folder can go.
    if (fx !== undefined) spawnSync('chmod', ['-R', 'u+w', fx.dir]);
    fx?.cleanup();
    fx = c = undefined;
  });

  it('keeps the copy a run is using, then removes it once the run and its session are over', async () => {
    fx = gatedFixture(CONFIG);
    const skill = join(fx.skills, 'waiter');
    mkdirSync(join(skill, 'scripts'), { recursive: true });
    writeFileSync(
      join(skill, 'SKILL.md'),
      '---\nname: waiter\ndescription: Waits for a go. Use in tests.\nentry_point: scripts/main.py\n---\n\nWaits.\n',
    );
    writeFileSync(join(skill, 'scripts', 'main.py'), WAITER);
    writeFileSync(join(skill, 'scripts', 'helper.txt'), 'approved');
    const audit = ['--audit', fx.auditPath];
    c = await connectStdio({
      era: 'legacy',
      args: ['--skills', fx.skills, '--config', fx.configFile, ...audit, '--no-watch'],
    });
    const call = c.client.callTool({ name: 'waiter', arguments: {} });
    const state = dirname(fx.auditPath);
    const filesDir = () => {
      const out = readdirSync(join(state, 'runs')).find((n) => n.startsWith('skills-mcp-out-'));
      return out === undefined ? undefined : join(state, 'runs', out, 'files');
    };
    await waitFor(
      () => existsSync(join(state, 'runs')) && existsSync(join(filesDir() ?? '/nonexistent', 'started')),
      60_000,
      'the script to start',
    );
    const bundles = join(state, 'bundles');
    const copies = readdirSync(bundles).filter((n) => HEX64.test(n));
    expect(copies).toHaveLength(1);
    const copy = join(bundles, copies[0]!);
    // Unused for a month, as far as its time says; the run is going on.
    backdate(copy, 30);
    const dry = runCli(['bundles', 'prune', '--dry-run', ...audit]);
    expect(dry.stdout).toBe(
      `would remove 0 bundle copies not used for 14 days from ${bundles}; kept 1 bundle copy a run or a live session uses\n`,
    );
    const during = runCli(['bundles', 'prune', '--unused-for', '0', ...audit]);
    expect(during.code, during.stderr).toBe(0);
    expect(during.stdout).toBe(
      `removed 0 bundle copies not used for 0 days from ${bundles}; kept 1 bundle copy a run or a live session uses\n`,
    );
    expect(existsSync(join(copy, 'scripts', 'helper.txt'))).toBe(true);
    writeFileSync(join(filesDir()!, 'go'), '');
    const result = await call;
    expect(result.isError, JSON.stringify(result.content)).toBeFalsy();
    expect(result.structuredContent).toEqual({ helper: 'approved' });

    await c.close();
    c = undefined;
    const after = runCli(['bundles', 'prune', '--unused-for', '0', ...audit]);
    expect(after.stdout).toBe(`removed 1 bundle copy not used for 0 days from ${bundles}\n`);
    expect(readdirSync(bundles).filter((n) => !n.startsWith('.'))).toEqual([]);
  });

  it('removes unused copies and half-made ones in the background after start, keeping recent ones', async () => {
    fx = gatedFixture(CONFIG);
    const bundles = join(dirname(fx.auditPath), 'bundles');
    const old = join(bundles, 'a'.repeat(64));
    const recent = join(bundles, 'b'.repeat(64));
    for (const d of [old, recent]) {
      mkdirSync(join(d, 'scripts'), { recursive: true });
      writeFileSync(join(d, 'scripts', 'main.py'), 'print("{}")\n');
    }
    backdate(old, 15);
    backdate(recent, 13);
    // What a crash mid-copy leaves behind: its process is gone.
    const gone = Number(
      spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']).stdout,
    );
    const crashed = join(bundles, `.tmp-${gone}-0123456789ab`);
    mkdirSync(crashed);
    c = await connectStdio({
      era: 'legacy',
      args: [
        '--skills',
        fx.skills,
        '--config',
        fx.configFile,
        '--audit',
        fx.auditPath,
        '--no-watch',
        '--log-level',
        'info',
      ],
    });
    await waitFor(() => c!.stderr().includes('removed unused bundle copies'), 60_000, 'the background prune');
    expect(existsSync(old)).toBe(false);
    expect(existsSync(crashed)).toBe(false);
    expect(existsSync(join(recent, 'scripts', 'main.py'))).toBe(true);
  });

  it('refuses a retention that is not a whole number of days, and prints its help', () => {
    const bad = runCli(['bundles', 'prune', '--unused-for', 'soon']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('skills-mcp bundles: --unused-for takes a whole number of days');
    const help = runCli(['bundles', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: skills-mcp bundles prune \[--unused-for DAYS\]/);
  });
});
