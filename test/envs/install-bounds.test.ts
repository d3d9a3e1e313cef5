import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import { buildSdist, buildWheel, offlinePip } from '../helpers/build-packages.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/temp-dir.js';

const MiB = 1024 * 1024;

describe('an install that grows too large or runs too long (built binary, real bubblewrap)', () => {
  const t = tempDir();
  const skills = join(t.dir, 'skills');
  const dists = join(t.dir, 'dists');
  const audit = join(t.dir, 'state', 'audit.db');
  const envsDir = join(t.dir, 'state', 'envs');
  // Source builds allowed so a setup.py can misbehave inside the install sandbox; pip only sees `dists`.
  const env = { ...offlinePip(dists), PIP_NO_BUILD_ISOLATION: '0' };
  const config = (name: string, body: string) => {
    const p = join(t.dir, name);
    writeFileSync(p, body);
    return p;
  };
  const deps = (cfg: string, ...args: string[]) =>
    runCli(['deps', ...args, '--skills', skills, '--audit', audit, '--config', cfg], { env });
  const skill = (name: string, requirement: string) => {
    mkdirSync(join(skills, name, 'scripts'), { recursive: true });
    writeFileSync(
      join(skills, name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: Declares ${requirement}. Use in tests.\n---\n\nx\n`,
    );
    writeFileSync(join(skills, name, 'requirements.txt'), `${requirement}\n`);
  };
  /** Nothing named like an environment, and no build folder left behind. */
  const nothingKept = () => expect(existsSync(envsDir) ? readdirSync(envsDir) : []).toEqual([]);

  beforeAll(() => {
    // 8 MiB installed from a wheel of a few KiB.
    buildWheel(dists, 'bigpkg', '1.0', 'VALUE = "big"\n', 8 * MiB);
    // A build step that keeps writing into the folder being built (its only writable place) until stopped.
    buildSdist(
      dists,
      'fillpkg',
      '1.0',
      [
        'import os, time',
        `env = ${JSON.stringify(envsDir)}`,
        'build = os.path.join(env, os.listdir(env)[0])',
        'for i in range(300):',
        '    with open(os.path.join(build, f"fill{i}"), "wb") as f:',
        '        f.write(b"x" * (1 << 20))',
        '    time.sleep(0.05)',
        'time.sleep(3600)',
      ].join('\n'),
    );
    buildSdist(dists, 'slowpkg', '1.0', 'import time\ntime.sleep(3600)\n');
    skill('big', 'bigpkg==1.0');
    skill('filler', 'fillpkg==1.0');
    skill('slow', 'slowpkg==1.0');
  });
  afterAll(() => t.cleanup());

  it('stops an install past dependencies.max_size_mib, keeps nothing, and records the failure', () => {
    const r = deps(config('small.yaml', 'dependencies:\n  max_size_mib: 2\n'), 'install', 'big');
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('big: installing the skill environment failed (pip): it grew past 2 MiB');
    expect(r.stderr).toContain('dependencies.max_size_mib');
    nothingKept();
    const store = openAuditStore({ path: audit, readOnly: true });
    try {
      const fin = [...store.exportEvents()].filter((e) => e.type === 'tool_call_finished').at(-1)!;
      expect(fin.payload).toMatchObject({ status: 'error', error_code: 'ENV_INSTALL_FAILED' });
    } finally {
      store.close();
    }
  });

  it('stops a build step that keeps filling the folder while it runs', () => {
    const cfg = config('fill.yaml', 'dependencies:\n  allow_source: true\n  max_size_mib: 4\n');
    const r = deps(cfg, 'install', 'filler');
    expect(r.stderr).toContain('filler: installing the skill environment failed (pip): it grew past 4 MiB');
    expect(r.code).toBe(1);
    nothingKept();
  });

  it('stops an install past dependencies.timeout_seconds and keeps nothing', () => {
    const cfg = config('slow.yaml', 'dependencies:\n  allow_source: true\n  timeout_seconds: 2\n');
    const r = deps(cfg, 'install', 'slow');
    expect(r.stderr).toContain('slow: installing the skill environment failed (pip): it ran past 2 s');
    expect(r.stderr).toContain('dependencies.timeout_seconds');
    expect(r.code).toBe(1);
    nothingKept();
  });

  it('installs the same environment once the quota allows it; the audit chain verifies', () => {
    const r = deps(config('roomy.yaml', 'dependencies:\n  max_size_mib: 64\n'), 'install', 'big');
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/big: installed bigpkg==1\.0 in \d+ ms/);
    expect(readdirSync(envsDir).filter((n) => /^[0-9a-f]{64}$/.test(n))).toHaveLength(1);
    expect(runCli(['audit', 'verify', '--audit', audit]).code).toBe(0);
  });
});
