import { chmodSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { tempDir } from '../helpers/temp-dir.js';

const skill = (dir: string, name: string) => {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'SKILL.md'),
    `---\nname: ${name}\ndescription: The ${name} skill, for tests.\n---\nDo ${name}.\n`,
  );
};

describe('--skills auto', () => {
  const t = tempDir();
  afterAll(t.cleanup);
  const home = join(t.dir, 'home');
  const project = join(t.dir, 'project');
  const outside = join(t.dir, 'elsewhere');
  skill(join(home, '.claude', 'skills', 'alpha'), 'alpha');
  skill(join(home, '.claude', 'skills', 'delta'), 'delta');
  skill(join(home, '.codex', 'skills', 'beta'), 'beta');
  skill(join(project, '.github', 'skills', 'gamma'), 'gamma');
  // The project's alpha and the user's claim one name: neither is served, as with any two folders.
  skill(join(project, '.claude', 'skills', 'alpha'), 'alpha');
  // A folder anyone may write to, and a link out of the home folder: found, never served.
  skill(join(home, '.gemini', 'skills', 'planted'), 'planted');
  chmodSync(join(home, '.gemini', 'skills'), 0o777);
  skill(join(outside, 'linked'), 'linked');
  mkdirSync(join(home, '.cursor'));
  symlinkSync(outside, join(home, '.cursor', 'skills'));

  const list = (...args: string[]) =>
    runCli(['list', '--skills', 'auto', ...args], { cwd: project, env: { HOME: home } });

  it('lists the skills of two hosts with their folder and host, and says which folders it found', () => {
    const r = list();
    console.log(`${r.stdout}\n--- stderr ---\n${r.stderr}`);
    expect(r.code).toBe(0);
    const rows = r.stdout.split('\n');
    expect(rows[0]).toMatch(/^NAME\s+KIND\s+TOOL\s+ORIGIN\s+HOST\s+WARNINGS/);
    expect(rows.find((l) => l.startsWith('delta'))).toMatch(/\.claude\/skills\/delta\s+claude \(user\)/);
    expect(rows.find((l) => l.startsWith('gamma'))).toMatch(/\.github\/skills\/gamma\s+copilot \(project\)/);
    expect(rows.find((l) => l.startsWith('beta'))).toMatch(/\.codex\/skills\/beta\s+codex \(user\)/);
    expect(r.stdout).toContain('3 skills');
    expect(r.stdout).toMatch(/duplicate-name: skill name "alpha" is claimed by 2 folders/);
    expect(r.stderr).toContain('found 4 host skill folder(s)');
    expect(r.stderr).toContain(`codex (user): ${join(home, '.codex', 'skills')}`);
  });

  it('never serves a folder others may write to or a link out of the home folder, and says why', () => {
    const r = list('--json');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout) as { skills: { name: string; host: string | null }[] };
    expect(out.skills.map((s) => s.name).sort()).toEqual(['beta', 'delta', 'gamma']);
    expect(out.skills.find((s) => s.name === 'beta')?.host).toBe('codex (user)');
    expect(r.stderr).toMatch(/gemini \(user\): .*\.gemini\/skills: not served: writable by anyone/);
    expect(r.stderr).toMatch(
      /cursor \(user\): .*\.cursor\/skills: not served: a link to .*elsewhere, outside/,
    );
  });

  it('says there is nothing to serve when no host folder exists', () => {
    const empty = join(t.dir, 'empty');
    mkdirSync(empty);
    const r = runCli(['list', '--skills', 'auto'], { cwd: empty, env: { HOME: empty } });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('found 0 host skill folder(s)');
    expect(r.stderr).toContain('no skills folder');
  });
});
