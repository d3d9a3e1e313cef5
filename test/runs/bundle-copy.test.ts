import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatedFixture } from '../helpers/gated-fixture.js';
import { gatedServers } from '../helpers/gated-server.js';
import type { Connected } from '../helpers/stdio-client.js';

type Answer = { action: 'accept'; content: { decision: string } } | { action: 'decline' };
const SESSION: Answer = { action: 'accept', content: { decision: 'approved_for_session' } };
const CONFIG = 'approval:\n  mode: ask\n  granularity: skill\n';

const skillMd = (name: string, entry: string) =>
  `---\nname: ${name}\ndescription: Test skill ${name}. Use in tests.\nentry_point: ${entry}\n---\n\n${name}.\n`;

/** Writes a skill folder with `files` (path → content). */
function writeSkill(root: string, name: string, entry: string, files: Record<string, string>): string {
  const dir = join(root, name);
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  writeFileSync(join(dir, 'SKILL.md'), skillMd(name, entry));
  for (const [p, body] of Object.entries(files)) {
    mkdirSync(join(dir, p, '..'), { recursive: true });
    writeFileSync(join(dir, p), body);
  }
  return dir;
}

const MAIN_PY = `import json, os, sys
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import helper
print(json.dumps({"v": helper.V}))
`;

/**
 * What runs is what was hashed: changes the bundle hash leaves out (bytecode caches, node_modules, links leaving
 * the skill) and changes racing the check never run under an approval given for other content.
 */
describe('runs execute the approved bundle, not the live folder (stdio, built binary)', () => {
  const startServer = gatedServers();
  let fx: GatedFixture | undefined;
  let c: Connected | undefined;
  let swapper: ChildProcess | undefined;
  afterEach(async () => {
    if (swapper?.exitCode === null) {
      const gone = new Promise((r) => swapper!.once('exit', r));
      swapper.kill('SIGTERM');
      await gone;
    }
    fx = c = swapper = undefined;
  });

  async function start(
    setup: (skills: string, dir: string) => void,
    answers: () => Answer,
    args: (dir: string) => string[] = () => [],
  ) {
    ({ fx, c } = await startServer(CONFIG, {
      setup: (f) => setup(f.skills, f.dir),
      args: (f) => args(f.dir),
    }));
    const asked: string[] = [];
    c.client.setRequestHandler('elicitation/create', (req: { params: { message: string } }) => {
      asked.push(req.params.message);
      return Promise.resolve(answers());
    });
    const call = async (name: string, a: Record<string, unknown> = {}) => {
      const r = await c!.client.callTool({ name, arguments: a });
      return { r, text: JSON.stringify(r.content) };
    };
    return { asked, call };
  }

  it('does not run a planted bytecode cache that matches the helper’s mtime and size', async () => {
    let helper = '';
    const { call } = await start(
      (skills) => {
        const dir = writeSkill(skills, 'pyc', 'scripts/main.py', {
          'scripts/main.py': MAIN_PY,
          'scripts/helper.py': 'V = "good"\n',
        });
        helper = join(dir, 'scripts', 'helper.py');
      },
      () => SESSION,
    );
    const first = await call('pyc');
    expect(first.r.structuredContent).toEqual({ v: 'good' });
    // The attacker compiles a same-size helper with the real one's mtime into the skill's __pycache__.
    const evil = join(fx!.dir, 'helper.py');
    writeFileSync(evil, 'V = "EVIL"\n');
    const { mtime } = statSync(helper);
    utimesSync(evil, mtime, mtime);
    const tag = spawnSync('python3', ['-c', 'import sys; print(sys.implementation.cache_tag)'], {
      encoding: 'utf8',
    }).stdout.trim();
    mkdirSync(join(helper, '..', '__pycache__'));
    const compiled = spawnSync('python3', [
      '-c',
      'import py_compile, sys; py_compile.compile(sys.argv[1], cfile=sys.argv[2], doraise=True)',
      evil,
      join(helper, '..', '__pycache__', `helper.${tag}.pyc`),
    ]);
    expect(compiled.status).toBe(0);
    const second = await call('pyc');
    expect(second.text).not.toContain('EVIL');
    expect(second.r.structuredContent).toEqual({ v: 'good' });
  });

  it('never runs a rewritten node_modules file, and refuses it as a script', async () => {
    let dep = '';
    const { call, asked } = await start(
      (skills) => {
        const dir = writeSkill(skills, 'nodemod', 'scripts/main.js', {
          'scripts/main.js':
            'let v = "no dependency";\ntry { v = require("../node_modules/dep/index.js").v; } catch {}\nconsole.log(JSON.stringify({ v }));\n',
          'node_modules/dep/index.js': 'exports.v = "dep v1";\n',
        });
        dep = join(dir, 'node_modules', 'dep', 'index.js');
      },
      () => SESSION,
    );
    const first = await call('nodemod');
    expect(first.text).not.toContain('dep v1');
    writeFileSync(dep, 'exports.v = "EVIL";\n');
    const second = await call('nodemod');
    expect(second.text).not.toContain('EVIL');
    const direct = await call('run_skill_script', { skill: 'nodemod', script: 'node_modules/dep/index.js' });
    expect(direct.r.isError).toBe(true);
    expect(direct.text).toContain('is not part of skill');
    expect(asked).toHaveLength(1);
  });

  it('never runs a helper that is a link out of the skill, after another process rewrote its target', async () => {
    let target = '';
    const { call } = await start(
      (skills, dir) => {
        const ws = join(dir, 'workspace');
        mkdirSync(ws);
        target = join(ws, 'helper.py');
        writeFileSync(target, 'V = "good"\n');
        const skill = writeSkill(skills, 'linked', 'scripts/main.py', { 'scripts/main.py': MAIN_PY });
        symlinkSync(target, join(skill, 'scripts', 'helper.py'));
      },
      () => SESSION,
      (dir) => ['--workspace', join(dir, 'workspace')],
    );
    const first = await call('linked');
    writeFileSync(target, 'V = "EVIL"\n');
    const second = await call('linked');
    expect(first.text + second.text).not.toContain('EVIL');
  });

  it('runs only the approved version while another process swaps main.py every 60 ms (40 calls)', async () => {
    let main = '';
    const v1 = 'import json\nprint(json.dumps({"v": "one"}))\n';
    const v2 = 'import json\nprint(json.dumps({"v": "two"}))\n';
    let granted = false;
    const { call, asked } = await start(
      (skills) => {
        const dir = writeSkill(skills, 'swap', 'scripts/main.py', { 'scripts/main.py': v1 });
        main = join(dir, 'scripts', 'main.py');
        writeFileSync(`${main}.v1`, v1);
        writeFileSync(`${main}.v2`, v2);
      },
      () => {
        // The person approved v1 for the session once; any later question (other content) is declined.
        if (granted) return { action: 'decline' };
        granted = true;
        return SESSION;
      },
    );
    expect((await call('swap')).r.structuredContent).toEqual({ v: 'one' });
    swapper = spawn(
      process.execPath,
      [
        '-e',
        `const fs = require('fs'); const m = ${JSON.stringify(main)}; let i = 0;
         setInterval(() => { i++; fs.copyFileSync(m + (i % 2 ? '.v2' : '.v1'), m + '.tmp'); fs.renameSync(m + '.tmp', m); }, 60);`,
      ],
      { stdio: 'ignore' },
    );
    const outcomes: string[] = [];
    for (let i = 0; i < 40; i++) {
      const { r, text } = await call('swap');
      expect(text).not.toContain('two');
      outcomes.push(r.isError ? 'refused' : JSON.stringify(r.structuredContent));
    }
    expect(outcomes.every((o) => o === '{"v":"one"}' || o === 'refused')).toBe(true);
    // Every refusal was a question to the person (declined) or a stale binding, never a silent run of v2.
    expect(asked.length).toBeGreaterThanOrEqual(1);
    const bundles = readdirSync(join(fx!.dir, 'state', 'bundles')).filter((n) => !n.startsWith('.'));
    expect(bundles.length).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
