import { cpSync, existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import { buildWheel, npmPack, offlinePip } from '../helpers/build-packages.js';
import { connectStdio, type Connected, type Era } from '../helpers/stdio-client.js';
import { repoRoot, tempDir } from '../helpers/temp-dir.js';
import { textOf } from '../helpers/text-of.js';

type Answer = { action: 'accept'; content: { decision: string } } | { action: 'decline' | 'cancel' };
const approve = (decision = 'approved'): Answer => ({ action: 'accept', content: { decision } });
const FIXTURES = join(repoRoot, 'test', 'fixtures', 'real-skills');

describe.each<Era>(['legacy', 'auto'])('skill environments through a real client (%s era)', (era) => {
  const t = tempDir();
  const skills = join(t.dir, 'skills');
  const wheels = join(t.dir, 'wheels');
  const auditPath = join(t.dir, 'state', 'audit.db');
  const envsDir = join(t.dir, 'state', 'envs');
  const answers: (Answer | (() => Answer))[] = [];
  const asked: string[] = [];
  let c: Connected;
  const run = (skill: string, script: string) =>
    c.client.callTool({ name: 'run_skill_script', arguments: { skill, script } });
  const builtEnvs = () =>
    existsSync(envsDir) ? readdirSync(envsDir).filter((n) => /^[0-9a-f]{64}$/.test(n)) : [];
  const leftovers = () =>
    existsSync(envsDir) ? readdirSync(envsDir).filter((n) => !/^[0-9a-f]{64}$/.test(n)) : [];

  beforeAll(async () => {
    cpSync(FIXTURES, skills, { recursive: true });
    buildWheel(wheels, 'tinypkg', '1.0', 'VALUE = "tinypkg 1.0"\n');
    buildWheel(wheels, 'tinypkg', '1.1', 'VALUE = "tinypkg 1.1"\n');
    buildWheel(wheels, 'tinypep', '1.0', 'VALUE = "tinypep works"\n');
    npmPack(join(repoRoot, 'test', 'fixtures', 'packages', 'tinynode'), join(skills, 'node-skill', 'vendor'));
    writeFileSync(join(t.dir, 'skills-mcp.yaml'), 'approval:\n  mode: ask\n  loop_guard: 0\n');
    c = await connectStdio({
      era,
      args: [
        '--skills',
        skills,
        '--config',
        join(t.dir, 'skills-mcp.yaml'),
        '--audit',
        auditPath,
        '--no-watch',
      ],
      env: offlinePip(wheels),
      capabilities: { elicitation: { form: {} } },
    });
    c.client.setRequestHandler('elicitation/create', (req: { params: { message: string } }) => {
      asked.push(req.params.message);
      const next = answers.shift();
      if (next === undefined) throw new Error('unexpected approval request');
      return Promise.resolve(typeof next === 'function' ? next() : next);
    });
  }, 120_000);
  afterAll(async () => {
    await c.close();
    t.cleanup();
  });

  it('shows the install plan in the approval form; declining installs nothing', async () => {
    answers.push({ action: 'decline' });
    const r = await run('req-skill', 'scripts/use.py');
    expect(r.isError).toBe(true);
    expect(asked.at(-1)).toContain('Install: first, in a sandbox with network');
    expect(asked.at(-1)).toContain('--only-binary=:all: tinypkg==1.0');
    expect(asked.at(-1)).toContain(`from find-links ${wheels}`);
    expect(builtEnvs()).toEqual([]);
  });

  it('installs once approved, then runs with the package; the audit records the spec hash and what was installed', async () => {
    answers.push(approve());
    const r = await run('req-skill', 'scripts/use.py');
    if (r.isError) console.log(textOf(r), c.stderr().slice(-3000));
    expect(r.isError ?? false).toBe(false);
    expect(r.structuredContent).toEqual({ value: 'tinypkg 1.0', in_env: true });
    expect(builtEnvs()).toHaveLength(1);
    expect(leftovers()).toEqual([]);
    const store = openAuditStore({ path: auditPath, readOnly: true });
    try {
      const events = [...store.exportEvents()];
      const fin = events.filter((e) => e.type === 'tool_call_finished').at(-1)!;
      expect((fin.payload as { env_installed?: string[] }).env_installed).toEqual(['tinypkg==1.0']);
      const req = events.filter((e) => e.type === 'tool_call_requested').at(-1)!;
      expect((req.payload as { env_sha256?: string }).env_sha256).toBe(builtEnvs()[0]);
      expect(store.verify().ok).toBe(true);
    } finally {
      store.close();
    }
  });

  it('reuses the built environment on the next call without an install in the form', async () => {
    answers.push(approve());
    const r = await run('req-skill', 'scripts/use.py');
    expect(r.structuredContent).toEqual({ value: 'tinypkg 1.0', in_env: true });
    expect(asked.at(-1)).not.toContain('Install:');
    expect(builtEnvs()).toHaveLength(1);
  });

  it('asks again with a new install plan after requirements.txt changes', async () => {
    writeFileSync(join(skills, 'req-skill', 'requirements.txt'), 'tinypkg==1.1\n');
    answers.push(approve());
    const r = await run('req-skill', 'scripts/use.py');
    expect(asked.at(-1)).toContain('tinypkg==1.1');
    expect(r.structuredContent).toEqual({ value: 'tinypkg 1.1', in_env: true });
    expect(builtEnvs()).toHaveLength(2);
  });

  it('refuses with stale_binding when requirements.txt changes between approval and run', async () => {
    const before = builtEnvs();
    answers.push(() => {
      writeFileSync(join(skills, 'req-skill', 'requirements.txt'), 'tinypkg==1.0\ntinypep\n');
      return approve();
    });
    const r = await run('req-skill', 'scripts/use.py');
    expect(r.isError).toBe(true);
    expect(textOf(r)).toMatch(/changed after the call was approved/);
    expect(builtEnvs()).toEqual(before);
    const store = openAuditStore({ path: auditPath, readOnly: true });
    try {
      expect(store.listCalls().some((x) => x.status === 'stale_binding')).toBe(true);
    } finally {
      store.close();
    }
  });

  it('installs a PEP 723 script dependency', async () => {
    answers.push(approve());
    const r = await run('pep723-skill', 'scripts/tool.py');
    if (r.isError) console.log(textOf(r));
    expect(asked.at(-1)).toContain('tinypep>=1.0');
    expect(r.structuredContent).toEqual({ pep723: 'tinypep works' });
  });

  it('installs a Node dependency from package.json (npm pack of a local folder) and resolves it', async () => {
    answers.push(approve());
    const r = await run('node-skill', 'scripts/main.js');
    if (r.isError) console.log(textOf(r));
    expect(asked.at(-1)).toContain('--ignore-scripts');
    expect(r.structuredContent).toEqual({ node: 'tinynode works' });
    const env = builtEnvs()
      .map((id) => JSON.parse(readFileSync(join(envsDir, id, 'env.json'), 'utf8')) as { installed: string[] })
      .find((m) => m.installed.includes('tinynode@1.0.0'));
    expect(env).toBeDefined();
  });
});
