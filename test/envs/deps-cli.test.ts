import { chmodSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import { buildSdist, buildWheel, offlinePip } from '../helpers/build-packages.js';
import { runCli } from '../helpers/run-cli.js';
import { repoRoot, tempDir } from '../helpers/temp-dir.js';

const FIXTURES = join(repoRoot, 'test', 'fixtures', 'real-skills');
const SECRET = 'HOST-SECRET-CANARY-5d1e0c';

describe('skills-mcp deps (built binary, real bubblewrap, packages built by the test)', () => {
  const t = tempDir();
  const skills = join(t.dir, 'skills');
  const wheels = join(t.dir, 'wheels');
  const audit = join(t.dir, 'state', 'audit.db');
  const envsDir = join(t.dir, 'state', 'envs');
  const env = offlinePip(wheels);
  const deps = (...args: string[]) =>
    runCli(['deps', ...args, '--skills', skills, '--audit', audit], { env });
  const built = () =>
    existsSync(envsDir) ? readdirSync(envsDir).filter((n) => /^[0-9a-f]{64}$/.test(n)) : [];

  beforeAll(() => {
    cpSync(join(FIXTURES, 'req-skill'), join(skills, 'req-skill'), { recursive: true });
    cpSync(join(FIXTURES, 'package-style'), join(skills, 'package-style'), { recursive: true });
    buildWheel(wheels, 'tinypkg', '1.0', 'VALUE = "tinypkg 1.0"\n');
    buildWheel(wheels, 'tinypkg', '1.1', 'VALUE = "tinypkg 1.1"\n');
  });
  afterAll(() => t.cleanup());

  it('lists a missing environment, installs it, then lists it as built', () => {
    const before = deps('list');
    expect(before.code).toBe(0);
    expect(before.stdout).toMatch(
      /^req-skill {2}[0-9a-f]{12} {2}missing {2}tinypkg==1\.0 {2}\(from requirements\.txt\)$/m,
    );
    expect(before.stdout).not.toContain('package-style');
    const install = deps('install', 'req-skill');
    expect(install.stderr).toBe('');
    expect(install.code).toBe(0);
    expect(install.stdout).toContain('--only-binary=:all: tinypkg==1.0');
    expect(install.stdout).toContain(`from find-links ${wheels}`);
    expect(install.stdout).toMatch(/req-skill: installed tinypkg==1\.0 in \d+ ms/);
    expect(deps('list').stdout).toMatch(/^req-skill {2}[0-9a-f]{12} {2}built/m);
    expect(deps('install').stdout).toContain('req-skill: already built');
    expect(built()).toHaveLength(1);
  });

  it('records the operator’s install in the audit log: who, the spec hash, what was installed; the chain verifies', () => {
    const store = openAuditStore({ path: audit, readOnly: true });
    try {
      const events = [...store.exportEvents()];
      const session = events.find((e) => e.type === 'session_started')!;
      expect(session.payload).toMatchObject({
        transport: 'cli',
        client: { name: 'skills-mcp deps install' },
      });
      const calls = store.listCalls();
      expect(calls).toHaveLength(1); // `deps install` of a built environment records nothing
      expect(calls[0]).toMatchObject({ tool: 'deps_install', skill: 'req-skill', status: 'ok' });
      const of = (type: string) => events.find((e) => e.type === type && e.call_id === calls[0]!.callId)!;
      expect(of('tool_call_requested').payload).toMatchObject({
        env_sha256: built()[0],
        input_sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
      });
      expect(of('policy_decided').payload).toMatchObject({
        decision: 'allow',
        rule: 'operator command line: skills-mcp deps install',
      });
      expect(of('tool_call_finished').payload).toMatchObject({
        status: 'ok',
        env_installed: ['tinypkg==1.0'],
      });
      expect(events.at(-1)!.type).toBe('session_ended');
    } finally {
      store.close();
    }
    const verify = runCli(['audit', 'verify', '--audit', audit]);
    expect(verify.stdout).toMatch(/ok|verified/i);
    expect(verify.code).toBe(0);
  });

  it('prunes environments no skill uses any more and leftover builds', () => {
    writeFileSync(join(skills, 'req-skill', 'requirements.txt'), 'tinypkg==1.1\n');
    expect(deps('install').code).toBe(0);
    expect(built()).toHaveLength(2);
    mkdirSync(join(envsDir, 'skills-mcp-out-crashed'));
    const prune = deps('prune');
    expect(prune.code).toBe(0);
    expect(prune.stdout).toContain('removed 2 (kept 1)');
    expect(built()).toHaveLength(1);
    expect(readdirSync(envsDir)).toEqual(built());
  });

  it('with dependencies.install: never, a call is refused with the exact command to run', () => {
    writeFileSync(join(skills, 'req-skill', 'requirements.txt'), 'tinypkg==1.0\n');
    const cfg = join(t.dir, 'never.yaml');
    writeFileSync(cfg, 'approval:\n  mode: allow\n  fallback: rules-only\ndependencies:\n  install: never\n');
    const before = readdirSync(envsDir).sort();
    const r = runCli(
      ['run', 'req-skill', 'scripts/use.py', '--skills', skills, '--audit', audit, '--config', cfg],
      {
        env,
      },
    );
    expect(r.code).toBe(1);
    expect(`${r.stdout}${r.stderr}`).toContain('The operator can run: skills-mcp deps install req-skill');
    expect(readdirSync(envsDir).sort()).toEqual(before);
  });

  it('builds an environment from the operator’s additions for a skill that declares nothing', () => {
    const cfg = join(t.dir, 'override.yaml');
    writeFileSync(cfg, 'dependencies:\n  skills:\n    package-style: { python: [tinypkg==1.0] }\n');
    const list = runCli(['deps', 'list', '--skills', skills, '--audit', audit, '--config', cfg], { env });
    expect(list.stdout).toMatch(
      /^package-style {2}[0-9a-f]{12} {2}missing {2}tinypkg==1\.0 {2}\(from skills-mcp\.yaml\)$/m,
    );
    const r = runCli(
      ['deps', 'install', 'package-style', '--skills', skills, '--audit', audit, '--config', cfg],
      {
        env,
      },
    );
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/package-style: installed tinypkg==1\.0 in \d+ ms/);
  });

  it('accepts the dependencies section of docs/writing-skills.md as written', () => {
    const readme = readFileSync(join(repoRoot, 'docs', 'writing-skills.md'), 'utf8');
    const block = /```yaml\n(dependencies:\n[\s\S]*?)```/.exec(readme)?.[1];
    expect(block).toContain('max_size_mib');
    const cfg = join(t.dir, 'readme.yaml');
    writeFileSync(cfg, block!);
    const r = runCli(['deps', 'list', '--skills', skills, '--audit', audit, '--config', cfg], { env });
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
  });

  it('rejects a config whose dependencies section is malformed, with path: message lines', () => {
    const cfg = join(t.dir, 'bad.yaml');
    writeFileSync(cfg, 'dependencies:\n  install: sometimes\n  skills:\n    pdf: { python: pypdf }\n');
    const r = runCli(['deps', 'list', '--skills', skills, '--config', cfg]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/dependencies\.install: /);
    expect(r.stderr).toMatch(/dependencies\.skills\.pdf\.python: /);
  });
});

describe('fenced installs: an sdist whose setup.py attacks the host', () => {
  const t = tempDir();
  const skills = join(t.dir, 'skills');
  const dists = join(t.dir, 'dists');
  const audit = join(t.dir, 'state', 'audit.db');
  const canaryDir = join(t.dir, 'canary'); // world-writable: only the mount namespace keeps the installer out
  const canary = join(canaryDir, 'written-by-setup-py');
  const secretFile = join(t.dir, 'host-secret.txt');
  // An index with credentials (never contacted: PIP_NO_INDEX) that a build script prints.
  const TOKEN = 'PIP-TOKEN-CANARY-93ab';
  const env = {
    ...offlinePip(dists),
    PIP_NO_BUILD_ISOLATION: '0',
    PIP_INDEX_URL: `http://ci-user:${TOKEN}@127.0.0.1:9/simple`,
  };

  beforeAll(() => {
    mkdirSync(canaryDir);
    chmodSync(canaryDir, 0o777);
    writeFileSync(secretFile, SECRET, { mode: 0o644 });
    chmodSync(t.dir, 0o755);
    const setup = [
      'import os, sys',
      'print("SETUP-PY-RAN", file=sys.stderr)',
      'print("index:", os.environ.get("PIP_INDEX_URL"), file=sys.stderr)',
      'try:',
      `    open(${JSON.stringify(canary)}, "w").write("escaped")`,
      '    print("CANARY-WRITTEN", file=sys.stderr)',
      'except OSError as e:',
      '    print("canary blocked:", type(e).__name__, file=sys.stderr)',
      'try:',
      `    print("secret:", open(${JSON.stringify(secretFile)}).read(), file=sys.stderr)`,
      'except OSError as e:',
      '    print("secret blocked:", type(e).__name__, file=sys.stderr)',
      'sys.exit(1)',
    ].join('\n');
    buildSdist(dists, 'evilpkg', '1.0', setup);
    mkdirSync(join(skills, 'evil', 'scripts'), { recursive: true });
    writeFileSync(
      join(skills, 'evil', 'SKILL.md'),
      '---\nname: evil\ndescription: Declares an sdist. Use in tests.\n---\n\nx\n',
    );
    writeFileSync(join(skills, 'evil', 'requirements.txt'), 'evilpkg==1.0\n');
  });
  afterAll(() => t.cleanup());

  it('refuses the sdist by default (binary wheels only) with a clear message; setup.py never runs', () => {
    const r = runCli(['deps', 'install', 'evil', '--skills', skills, '--audit', audit], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('installing the skill environment failed');
    expect(r.stderr).toContain('dependencies.allow_source: true');
    expect(r.stderr).not.toContain('SETUP-PY-RAN');
    expect(existsSync(canary)).toBe(false);
  });

  it('runs setup.py inside the install sandbox when source builds are allowed: no host write, no host secret', () => {
    const cfg = join(t.dir, 'allow.yaml');
    writeFileSync(cfg, 'dependencies:\n  allow_source: true\n');
    const r = runCli(['deps', 'install', 'evil', '--skills', skills, '--audit', audit, '--config', cfg], {
      env,
    });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('SETUP-PY-RAN'); // positive control: the hostile code did run
    expect(r.stderr).toMatch(/canary blocked: (FileNotFoundError|PermissionError|OSError)/);
    expect(r.stderr).toMatch(/secret blocked: (FileNotFoundError|PermissionError)/);
    expect(r.stderr).not.toContain(SECRET);
    // The index credentials the installer needs never reach what is shown, logged or audited.
    expect(r.stderr).toContain('index: http://***@127.0.0.1:9/simple');
    expect(r.stderr).not.toContain(TOKEN);
    expect(existsSync(canary)).toBe(false);
    expect(readdirSync(join(t.dir, 'state', 'envs'))).toEqual([]);
  });
});
