import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';
import { builtCli, repoRoot, tempDir } from '../helpers/temp-dir.js';

const bundled = join(repoRoot, 'skills');
const fixtures = join(repoRoot, 'test', 'fixtures', 'roots');

describe('skills-mcp CLI', () => {
  const t = tempDir();
  afterAll(t.cleanup);

  it('prints the version from package.json', () => {
    const r = runCli(['--version']);
    const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
    expect(r).toMatchObject({ code: 0, stdout: `${pkg.version}\n` });
  });

  it.each([['--help'], ['lint', '--help'], ['list', '--help'], ['config', '--help']])(
    'answers %s with usage and exit 0',
    (...args) => {
      const r = runCli(args);
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/Usage/);
    },
  );

  it('exits 2 on an unknown command or flag', () => {
    expect(runCli(['frobnicate']).code).toBe(2);
    const r = runCli(['--skills', bundled, '--bogus']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Unknown option '--bogus'");
  });

  it('exits 2 with path: message lines for an invalid config file', () => {
    const file = join(t.dir, 'bad.yaml');
    writeFileSync(file, 'skills: [./skills]\ntools: many\nlog_level: loud\ntypo_key: 1\n');
    const r = runCli(['--config', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${file}: tools: Invalid option`);
    expect(r.stderr).toContain(`${file}: log_level: Invalid option`);
    expect(r.stderr).toMatch(/\(root\): Unrecognized key: "typo_key"/);
    expect(r.stdout).toBe('');
  });

  it('exits 2 when a skills folder does not exist', () => {
    const r = runCli(['--skills', join(t.dir, 'missing')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('skills folder does not exist');
  });

  it('exits 2 when no skills folder is given', () => {
    const r = runCli([], { cwd: t.dir });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--skills DIR');
  });

  it('reads skills from ./skills-mcp.yaml relative to the file', () => {
    const dir = join(t.dir, 'proj');
    mkdirSync(dir);
    writeFileSync(join(dir, 'skills-mcp.yaml'), `skills:\n  - ${bundled}\ntools: compact\n`);
    const r = runCli(['list', '--json'], { cwd: dir });
    expect(r.code).toBe(0);
    expect((JSON.parse(r.stdout) as { skills: { name: string }[] }).skills.map((s) => s.name)).toContain(
      'csv-stats',
    );
  });

  it('lint passes the bundled skills', () => {
    const r = runCli(['lint', bundled]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/4 skills loaded; 0 errors, 0 warnings/);
  });

  it('lint prints path:line: rule: message for the fixture corpus and exits 1', () => {
    const r = runCli(['lint', join(fixtures, 'main'), join(fixtures, 'second'), join(fixtures, 'plugin')], {
      cwd: repoRoot,
    });
    expect(r.code).toBe(1);
    expect(r.stdout).toContain(
      'test/fixtures/roots/main/long-description/SKILL.md:3: description-too-long: description is 1100 chars; the limit is 1024\n',
    );
    expect(r.stdout).toContain(
      'test/fixtures/roots/main/unknown-fields/SKILL.md:4: unknown-field: unknown field "author" is kept and ignored (warning)\n',
    );
    expect(r.stdout).toContain('18 skills loaded; 18 errors, 6 warnings');
  });

  it('lint --json gives machine-readable findings', () => {
    const r = runCli(['lint', '--json', join(fixtures, 'main')]);
    const out = JSON.parse(r.stdout) as { errors: number; findings: { rule: string; severity: string }[] };
    expect(out.errors).toBeGreaterThan(0);
    expect(out.findings.some((f) => f.rule === 'frontmatter-engine' && f.severity === 'error')).toBe(true);
  });

  it('list shows kind, tool name, origin and warnings, and the skipped skills', () => {
    const r = runCli(['list', '--skills', join(fixtures, 'main')], { cwd: repoRoot });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^NAME\s+KIND\s+TOOL\s+ORIGIN\s+WARNINGS\s+UNDECLARED IMPORTS$/m);
    expect(r.stdout).toMatch(
      /^Bad_Name--X\s+instruction\s+=\s+test\/fixtures\/roots\/main\/bad-name-format\s+name-format, name-folder-mismatch\s+-$/m,
    );
    expect(r.stdout).toMatch(/^executable-entry\s+executable\s+=/m);
    expect(r.stdout).toContain('Skipped:');
    expect(r.stdout).toContain('frontmatter-engine');
  });

  it('list and lint name third-party imports no declaration covers, with the declaration to add', () => {
    const real = join(repoRoot, 'test', 'fixtures', 'real-skills');
    const list = runCli(['list', '--skills', real], { cwd: repoRoot });
    expect(list.code).toBe(0);
    expect(list.stdout).toMatch(/^needs-tools\s+instruction\s+=\s+\S+\s+-\s+python-docx, pillow$/m);
    expect(list.stdout).toMatch(/^req-skill\s+instruction\s+=\s+\S+\s+-\s+-$/m); // declared in requirements.txt
    expect(list.stdout).toMatch(/^package-style\s+.*\s+-$/m); // `from scripts.helpers` is the skill's own
    // node-skill's vendored tarball is packed by its own test, so lint only the skill this is about.
    const lint = runCli(['lint', join(real, 'needs-tools')], { cwd: repoRoot });
    expect(lint.code).toBe(0);
    expect(lint.stdout).toContain(
      'test/fixtures/real-skills/needs-tools/scripts/read_docx.py:4: undeclared-import: imports "PIL" (package pillow), which no declared environment provides: add "pillow" to requirements.txt (or a PEP 723 block), or in skills-mcp.yaml: dependencies: { skills: { needs-tools: { python: [pillow] } } } (warning)',
    );
    expect(lint.stdout).toContain('1 skills loaded; 0 errors, 2 warnings');
  });

  it.each(['claude-desktop', 'cursor', 'cline'])(
    'config %s prints an mcpServers snippet with absolute paths',
    (client) => {
      const r = runCli(['config', client, '--skills', 'skills'], { cwd: repoRoot });
      expect(r.code).toBe(0);
      const cfg = JSON.parse(r.stdout) as { mcpServers: { skills: { command: string; args: string[] } } };
      expect(cfg.mcpServers.skills.command).toBe(process.execPath);
      expect(cfg.mcpServers.skills.args).toEqual([builtCli, '--skills', bundled]);
    },
  );

  it('config vscode uses servers with type stdio', () => {
    const cfg = JSON.parse(runCli(['config', 'vscode', '--skills', bundled]).stdout) as {
      servers: { skills: { type: string } };
    };
    expect(cfg.servers.skills.type).toBe('stdio');
  });

  it('config claude-code prints a claude mcp add line, and --npx uses the published package', () => {
    expect(runCli(['config', 'claude-code', '--skills', bundled]).stdout).toBe(
      `claude mcp add skills -- ${process.execPath} ${builtCli} --skills ${bundled}\n`,
    );
    const cfg = JSON.parse(runCli(['config', 'cursor', '--npx', '--skills', bundled]).stdout) as {
      mcpServers: { skills: { command: string; args: string[] } };
    };
    expect(cfg.mcpServers.skills).toEqual({
      command: 'npx',
      args: ['-y', 'skills-mcp', '--skills', bundled],
    });
  });

  it('config refuses an unknown client with exit 2', () => {
    expect(runCli(['config', 'emacs']).code).toBe(2);
  });
});
