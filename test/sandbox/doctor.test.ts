import { existsSync } from 'node:fs';
import { copyFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runDoctor } from '../../src/cli/doctor.js';
import { main } from '../../src/cli/main.js';
import type { CliIo } from '../../src/cli/io.js';
import { defaultProfilesDir } from '../../src/sandbox/load-profile.js';
import { tempDirs } from './helpers.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

function io(): CliIo & { stdout: () => string; stderr: () => string } {
  let out = '';
  let err = '';
  return {
    out: (t) => (out += t),
    err: (t) => (err += t),
    env: process.env,
    cwd: process.cwd(),
    stdinIsTTY: false,
    stdout: () => out,
    stderr: () => err,
  };
}

describe('skills-mcp doctor', () => {
  it('reports a healthy sandbox, its limits layer, interpreters and profiles as JSON', async () => {
    const c = io();
    expect(await runDoctor(['--json'], c)).toBe(0);
    const rep = JSON.parse(c.stdout());
    expect(rep.healthy).toBe(true);
    expect(rep.sandbox).toMatchObject({
      adapter: 'bwrap',
      binary: '/usr/bin/bwrap',
      diagnosis: { code: 'ok' },
    });
    expect(rep.sandbox.limits.memory).toMatch(/^(cgroup|rlimit-best-effort)$/);
    expect(
      rep.interpreters.map((i: { name: string; runsInSandbox: boolean }) => [i.name, i.runsInSandbox]),
    ).toEqual([
      ['python3', true],
      ['node', true],
      ['bash', true],
    ]);
    expect(rep.profiles).toEqual([
      { name: 'default', valid: true },
      { name: 'install', valid: true },
      { name: 'network', valid: true },
      { name: 'strict', valid: true },
    ]);
    expect(c.stderr()).toBe('');
  });

  it('reports which programs skills call are installed and start inside the sandbox, with a fix for the others', async () => {
    const c = io();
    expect(await runDoctor(['--json'], c)).toBe(0);
    const programs = (JSON.parse(c.stdout()) as { programs: Record<string, unknown>[] }).programs;
    expect(programs.map((p) => p.name)).toEqual(['soffice', 'fc-list', 'gs', 'pdftoppm', 'git', 'convert']);
    const byName = new Map(programs.map((p) => [p.name, p]));
    expect(byName.get('git')).toMatchObject({ installed: true, path: '/usr/bin/git', runsInSandbox: true });
    expect(byName.get('fc-list')).toMatchObject({ installed: true, runsInSandbox: true });
    if (existsSync('/usr/bin/soffice'))
      expect(byName.get('soffice')).toMatchObject({ path: '/usr/bin/soffice', runsInSandbox: true });
    for (const p of programs)
      if (p.runsInSandbox !== true) expect(p.fix).toMatch(/read_only_paths|apt-get install/);
  }, 60_000);

  it('prints a readable report', async () => {
    const c = io();
    expect(await runDoctor([], c)).toBe(0);
    expect(c.stdout()).toMatch(/^ {2}sandbox {7}bwrap \/usr\/bin\/bwrap .*: healthy$/m);
    expect(c.stdout()).toMatch(/^ {2}limits {8}/m);
    expect(c.stdout()).toMatch(/^ {4}python3 .* — runs in sandbox$/m);
  });

  it('flags an invalid profile', async () => {
    const dir = await dirs.make();
    await copyFile(join(defaultProfilesDir(), 'default.yaml'), join(dir, 'default.yaml'));
    await writeFile(join(dir, 'broken.yaml'), 'network: sometimes\n');
    const c = io();
    await runDoctor(['--json', '--profiles', dir], c);
    const rep = JSON.parse(c.stdout());
    expect(rep.profiles[0]).toMatchObject({ name: 'broken', valid: false });
    expect(rep.profiles[0].error).toMatch(/network/);
  });

  it('prints help, and exits 2 on an unknown argument', async () => {
    const c = io();
    expect(await runDoctor(['--help'], c)).toBe(0);
    expect(c.stdout()).toMatch(/^Usage: skills-mcp doctor/);
    const d = io();
    expect(await main(['doctor', '--frobnicate'], d, process.stdin)).toBe(2);
    expect(d.stderr()).toMatch(/Unknown option '--frobnicate'[^]*skills-mcp doctor --help/);
  });
});
