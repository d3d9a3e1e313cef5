import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildWheel, offlinePip } from '../helpers/build-packages.js';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/temp-dir.js';

/** Each CLI run may take this long on a busy machine (pip in the sandbox). */
const SLOW = 120_000;

describe(
  'a package that is installed but too old (built binary, real bubblewrap, two versions built by the test)',
  { timeout: 4 * SLOW },
  () => {
    const t = tempDir();
    const skills = join(t.dir, 'skills');
    const wheels = join(t.dir, 'wheels');
    const audit = join(t.dir, 'state', 'audit.db');
    const cfg = join(t.dir, 'allow.yaml');
    const env = offlinePip(wheels);
    const skill = join(skills, 'notes');
    const run = (script: string) =>
      runCli(['run', 'notes', script, '--skills', skills, '--audit', audit, '--config', cfg], {
        env,
        timeoutMs: SLOW,
      });
    const install = () =>
      runCli(['deps', 'install', 'notes', '--skills', skills, '--audit', audit], { env, timeoutMs: SLOW });

    beforeAll(() => {
      buildWheel(wheels, 'verpkg', '1.0', 'VERSION = "1.0"\n');
      buildWheel(wheels, 'verpkg', '2.0', 'VERSION = "2.0"\nNEW = "new in 2.0"\n', 0, {
        'annotations.py': 'class Note:\n    text = "a note"\n',
      });
      mkdirSync(join(skill, 'scripts'), { recursive: true });
      writeFileSync(
        join(skill, 'SKILL.md'),
        '---\nname: notes\ndescription: Annotates. Use in tests.\n---\n\nx\n',
      );
      writeFileSync(join(skill, 'requirements.txt'), 'verpkg==1.0\n');
      writeFileSync(
        join(skill, 'scripts', 'annotate.py'),
        'from verpkg.annotations import Note\nprint(Note.text)\n',
      );
      writeFileSync(join(skill, 'scripts', 'newname.py'), 'from verpkg import NEW\nprint(NEW)\n');
      writeFileSync(cfg, 'approval:\n  mode: allow\n  fallback: rules-only\n');
    });
    afterAll(() => t.cleanup());

    it('says the installed version lacks the submodule, and to pin a newer one, instead of "missing"', () => {
      expect(install().code).toBe(0);
      const r = run('scripts/annotate.py');
      const text = `${r.stdout}${r.stderr}`;
      expect(r.code).toBe(1);
      expect(text).toContain("No module named 'verpkg.annotations'");
      expect(text).toContain(
        'Python package verpkg 1.0 is installed, but it has no module "verpkg.annotations": it is older',
      );
      expect(text).toContain('`verpkg>1.0` in its requirements.txt');
      expect(text).toContain('skills-mcp deps install notes');
      expect(text).not.toContain('Missing Python module');
    });

    it('says the installed version lacks an imported name', () => {
      const r = run('scripts/newname.py');
      const text = `${r.stdout}${r.stderr}`;
      expect(r.code).toBe(1);
      expect(text).toContain('Python package verpkg 1.0 is installed, but its module "verpkg" has no "NEW"');
      expect(text).not.toContain('Missing Python module');
    });

    it('runs once the newer version is pinned and installed', () => {
      writeFileSync(join(skill, 'requirements.txt'), 'verpkg>1.0\n');
      expect(install().code).toBe(0);
      const r = run('scripts/annotate.py');
      expect(r.stdout).toContain('a note');
      expect(r.code).toBe(0);
    });
  },
);
