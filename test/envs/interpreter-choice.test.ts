import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWheel, offlinePip } from '../helpers/build-packages.js';
import { runCli } from '../helpers/run-cli.js';
import { connectStdio } from '../helpers/stdio-client.js';
import { textOf } from '../helpers/text-of.js';
import { repoRoot, tempDir } from '../helpers/temp-dir.js';

const FIXTURES = join(repoRoot, 'test', 'fixtures', 'real-skills');

/**
 * A virtual environment with `wheel` unpacked into its site-packages, as `pip install` would leave it. Without pip of
 * its own; `systemSite` lets it see (and run) the base interpreter's pip.
 */
function venvWith(dir: string, wheel: string, systemSite = true): string {
  execFileSync('python3', [
    '-m',
    'venv',
    '--without-pip',
    ...(systemSite ? ['--system-site-packages'] : []),
    dir,
  ]);
  const python = join(dir, 'bin', 'python');
  const site = execFileSync(
    python,
    ['-I', '-c', 'import sysconfig;print(sysconfig.get_paths()["purelib"])'],
    {
      encoding: 'utf8',
    },
  ).trim();
  execFileSync(python, [
    '-I',
    '-c',
    'import sys,zipfile;zipfile.ZipFile(sys.argv[1]).extractall(sys.argv[2])',
    wheel,
    site,
  ]);
  return python;
}

/** Each CLI run may take this long on a busy machine (pip in the sandbox). */
const SLOW = 120_000;

describe(
  'the interpreter (dependencies.python) and the host packages it has (built binary, real bubblewrap)',
  { timeout: 4 * SLOW },
  () => {
    const t = tempDir();
    const skills = join(t.dir, 'skills');
    const wheels = join(t.dir, 'wheels');
    const audit = join(t.dir, 'state', 'audit.db');
    const envsDir = join(t.dir, 'state', 'envs');
    const env = offlinePip(wheels);
    let python = '';
    const config = (name: string, text: string) => {
      const f = join(t.dir, name);
      writeFileSync(f, text);
      return f;
    };
    const cli = (cfg: string, ...args: string[]) =>
      runCli([...args, '--skills', skills, '--audit', audit, '--config', cfg], { env, timeoutMs: SLOW });
    const built = () =>
      existsSync(envsDir) ? readdirSync(envsDir).filter((n) => /^[0-9a-f]{64}$/.test(n)) : [];

    beforeAll(() => {
      cpSync(join(FIXTURES, 'req-skill'), join(skills, 'req-skill'), { recursive: true });
      writeFileSync(
        join(skills, 'req-skill', 'scripts', 'which.py'),
        'import json, sys\nprint(json.dumps({"prefix": sys.prefix}))\n',
      );
      const wheel = buildWheel(wheels, 'tinypkg', '1.0', 'VALUE = "tinypkg 1.0 from the host"\n');
      buildWheel(wheels, 'tinypkg', '2.0', 'VALUE = "tinypkg 2.0"\n');
      python = venvWith(join(t.dir, 'host-venv'), wheel);
      mkdirSync(join(t.dir, 'state'), { recursive: true });
    });
    afterAll(() => t.cleanup());

    it('refuses a dependencies.python that is missing or not Python, with exit 2 and path: message', () => {
      const missing = cli(
        config('missing.yaml', 'dependencies:\n  python: /nonexistent/python3\n'),
        'deps',
        'list',
      );
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('dependencies.python: "/nonexistent/python3" does not exist');
      const notPython = join(t.dir, 'not-python');
      writeFileSync(notPython, '#!/bin/sh\necho hello\n', { mode: 0o755 });
      const bad = cli(config('bad.yaml', `dependencies:\n  python: ${notPython}\n`), 'deps', 'list');
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain(`dependencies.python: "${notPython}" did not report a Python version`);
      const relative = cli(config('rel.yaml', 'dependencies:\n  python: python3\n'), 'deps', 'list');
      expect(relative.code).toBe(2);
      expect(relative.stderr).toMatch(/dependencies\.python: must be an absolute path/);
    });

    it('runs Python scripts on the chosen interpreter (a venv’s python, its packages seen in the sandbox)', () => {
      const cfg = config(
        'venv.yaml',
        `approval:\n  mode: allow\n  fallback: rules-only\ndependencies:\n  python: ${python}\n  use_host_packages: true\n`,
      );
      const list = cli(cfg, 'deps', 'list');
      expect(list.stderr).toBe('');
      expect(list.stdout).toMatch(
        new RegExp(
          `^req-skill {2}host packages of ${python} {2}tinypkg==1\\.0 \\(1\\.0\\) {2}\\(no environment built\\)$`,
          'm',
        ),
      );
      expect(list.stdout).toContain(`Python: ${python} (dependencies.python)`);
      const which = cli(cfg, 'run', 'req-skill', 'scripts/which.py');
      expect(which.stdout).toContain(`"prefix": "${join(t.dir, 'host-venv')}"`);
      const use = cli(cfg, 'run', 'req-skill', 'scripts/use.py');
      expect(use.stdout).toContain('"value": "tinypkg 1.0 from the host"');
      expect(use.stdout).toContain('"in_env": false');
      expect(use.code).toBe(0);
      expect(built()).toHaveLength(0);
    });

    it('names the chosen interpreter on the approval form, as the program that runs', async () => {
      const cfg = config(
        'ask.yaml',
        `approval:\n  mode: ask\ndependencies:\n  python: ${python}\n  use_host_packages: true\n`,
      );
      const c = await connectStdio({
        era: 'legacy',
        args: ['--skills', skills, '--config', cfg],
        capabilities: { elicitation: { form: {} } },
        env: { ...env, SKILLS_MCP_AUDIT: join(t.dir, 'form-state', 'audit.db') },
      });
      try {
        const forms: string[] = [];
        c.client.setRequestHandler('elicitation/create', (req) => {
          forms.push((req.params as { message: string }).message);
          return Promise.resolve({ action: 'accept', content: { decision: 'approved' } });
        });
        const r = await c.client.callTool({
          name: 'run_skill_script',
          arguments: { skill: 'req-skill', script: 'scripts/which.py' },
        });
        expect(r.isError, textOf(r)).toBeFalsy();
        expect(textOf(r)).toContain(`"prefix": "${join(t.dir, 'host-venv')}"`);
        expect(forms).toHaveLength(1);
        expect(forms[0]).toContain(`Command: ${python} scripts/which.py`);
      } finally {
        await c.close();
      }
    });

    it('builds the environment as usual when the host packages do not satisfy the requirement', () => {
      writeFileSync(join(skills, 'req-skill', 'requirements.txt'), 'tinypkg>=2\n');
      const cfg = config(
        'venv2.yaml',
        `approval:\n  mode: allow\n  fallback: rules-only\ndependencies:\n  python: ${python}\n  use_host_packages: true\n`,
      );
      expect(cli(cfg, 'deps', 'list').stdout).toMatch(/^req-skill {2}[0-9a-f]{12} {2}missing {2}tinypkg>=2/m);
      const install = cli(cfg, 'deps', 'install', 'req-skill');
      expect(install.stderr).toBe('');
      expect(install.stdout).toMatch(/req-skill: installed tinypkg==2\.0/);
      const use = cli(cfg, 'run', 'req-skill', 'scripts/use.py');
      expect(use.stdout).toContain('"value": "tinypkg 2.0"');
      expect(use.stdout).toContain('"in_env": true');
      expect(built()).toHaveLength(1);
    });

    it('says an interpreter without pip cannot build environments, and what to set', () => {
      const bare = venvWith(join(t.dir, 'bare-venv'), join(wheels, 'tinypkg-1.0-py3-none-any.whl'), false);
      writeFileSync(join(skills, 'req-skill', 'requirements.txt'), 'tinypkg==1.0\n');
      const cfg = config('bare.yaml', `dependencies:\n  python: ${bare}\n`);
      const r = cli(cfg, 'deps', 'install', 'req-skill');
      expect(r.code).toBe(1);
      expect(r.stderr.split('\n')[0]).toContain('(pip, exit 1): the interpreter has no pip');
      expect(r.stderr).toContain('`dependencies.python`');
    });
  },
);
