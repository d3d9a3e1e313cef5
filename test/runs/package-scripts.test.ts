import { cpSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStdio, type Connected } from '../helpers/stdio-client.js';
import { repoRoot, tempDir } from '../helpers/temp-dir.js';
import { textOf } from '../helpers/text-of.js';

const ALLOW_ALL = 'approval:\n  mode: allow\n  fallback: rules-only\n  high_risk: ask\n';
const FIXTURES = join(repoRoot, 'test', 'fixtures', 'real-skills');

describe.each(['legacy', 'auto'] as const)('package-style scripts and clear failures (%s era)', (era) => {
  const t = tempDir();
  let c: Connected;
  const call = (args: Record<string, unknown>) =>
    c.client.callTool({ name: 'run_skill_script', arguments: args });

  beforeAll(async () => {
    cpSync(FIXTURES, join(t.dir, 'skills'), { recursive: true });
    // Folders named like modules found elsewhere on the path, without __init__.py (namespace portions).
    const pkg = join(t.dir, 'skills', 'package-style');
    for (const rel of ['json/tool.py', 'pip/__main__.py', 'tools/run.py']) {
      mkdirSync(join(pkg, rel, '..'), { recursive: true });
      writeFileSync(join(pkg, rel), 'print("the skill\'s own file")\n');
    }
    writeFileSync(join(t.dir, 'skills-mcp.yaml'), ALLOW_ALL);
    c = await connectStdio({
      era,
      args: ['--skills', join(t.dir, 'skills'), '--config', join(t.dir, 'skills-mcp.yaml'), '--no-watch'],
    });
  }, 60_000);
  afterAll(async () => {
    await c.close();
    t.cleanup();
  });

  it('runs a package-style module with `-m` from the skill root; relative output comes back as a file', async () => {
    const r = await call({ skill: 'package-style', module: 'scripts.package_skill', args: ['Ada'] });
    expect(r.isError ?? false).toBe(false);
    expect(r.structuredContent ?? JSON.parse(textOf(r).split('\n\n')[0]!)).toMatchObject({
      greeting: 'hello, Ada',
      module: '__main__',
      spec: 'scripts.package_skill',
      cwd_is_files: true,
    });
    const links = ((r.content ?? []) as { type: string; name?: string; uri?: string }[]).filter(
      (x) => x.type === 'resource_link',
    );
    expect(links.map((l) => l.name)).toContain('report.txt');
    const file = await c.client.readResource({ uri: links.find((l) => l.name === 'report.txt')!.uri! });
    expect((file.contents[0] as { text?: string }).text).toBe('hello, Ada\n');
  });

  it('runs a script file that imports its siblings as `scripts.helpers`', async () => {
    const r = await call({ skill: 'package-style', script: 'scripts/validate.py', args: ['x'] });
    expect(r.isError ?? false).toBe(false);
    expect(textOf(r)).toContain('"greeting": "hello, x"');
  });

  it('refuses a module that is not a file of the skill, and a call naming both script and module', async () => {
    const missing = await call({ skill: 'package-style', module: 'os.path' });
    expect(missing.isError).toBe(true);
    expect(textOf(missing)).toContain('"os.path" names a standard library module');
    const absent = await call({ skill: 'package-style', module: 'scripts.nothing' });
    expect(textOf(absent)).toContain('has no module "scripts.nothing"');
    const both = await call({
      skill: 'package-style',
      module: 'scripts.helpers',
      script: 'scripts/validate.py',
    });
    expect(both.isError).toBe(true);
    expect(textOf(both)).toContain('exactly one of "script" or "module"');
    const bad = await call({ skill: 'package-style', module: '../etc' });
    expect(textOf(bad)).toContain('is not a Python module name');
  });

  it('refuses a module Python would take from elsewhere than the file the approval binds', async () => {
    // `json/tool.py` of the skill: `python -m json.tool` runs the standard library's json.tool instead.
    const stdlib = await call({ skill: 'package-style', module: 'json.tool' });
    expect(stdlib.isError).toBe(true);
    expect(textOf(stdlib)).toContain('"json.tool" names a standard library module');
    expect(textOf(stdlib)).not.toContain("the skill's own file");
    // `pip/__main__.py` without pip/__init__.py: the interpreter's own pip package wins over the namespace folder.
    for (const module of ['pip', 'tools.run']) {
      const r = await call({ skill: 'package-style', module });
      expect(r.isError).toBe(true);
      expect(textOf(r)).toMatch(/"(pip|tools)\/" of skill "package-style" has no __init__\.py/);
    }
  });

  it('names a missing Python module, its package and the declaration that provides it', async () => {
    const r = await call({ skill: 'needs-tools', script: 'scripts/read_docx.py', args: ['a.docx'] });
    expect(r.isError).toBe(true);
    const text = textOf(r);
    expect(text).toContain('Missing Python module "docx" (package python-docx)');
    expect(text).toContain('dependencies: { skills: { needs-tools: { python: [python-docx] } } }');
    expect(text).toContain('skills-mcp deps install needs-tools');
  });

  it('names a missing command run from Python and from bash, with the host package', async () => {
    // Two commands skills call whose Debian package is known, and which this host does not have (the set-up step
    // installs LibreOffice and poppler for other tests, so which ones are missing is looked up, not assumed).
    const known: Array<[string, string]> = [
      ['soffice', 'libreoffice'],
      ['pdftoppm', 'poppler-utils'],
      ['qpdf', 'qpdf'],
      ['tesseract', 'tesseract-ocr'],
      ['pandoc', 'pandoc'],
      ['ffmpeg', 'ffmpeg'],
      ['jq', 'jq'],
    ];
    const absent = known.filter(
      ([cmd]) => !['/usr/bin', '/bin', '/usr/local/bin'].some((d) => existsSync(join(d, cmd))),
    );
    expect(absent.length, 'this host has every command of the list').toBeGreaterThanOrEqual(2);
    const [[pyCmd, pyPkg], [shCmd, shPkg]] = absent as [[string, string], [string, string]];
    const py = await call({ skill: 'needs-tools', script: 'scripts/convert.py', args: [pyCmd] });
    expect(py.isError).toBe(true);
    expect(textOf(py)).toContain(`Missing command "${pyCmd}"`);
    expect(textOf(py)).toContain(`apt-get install ${pyPkg}`);
    const sh = await call({ skill: 'needs-tools', script: 'scripts/thumbs.sh', args: [shCmd] });
    expect(sh.isError).toBe(true);
    expect(textOf(sh)).toContain(`Missing command "${shCmd}"`);
    expect(textOf(sh)).toContain(`apt-get install ${shPkg}`);
  });

  it('tells the model where outputs go in the tool description', async () => {
    const tools = await c.client.listTools();
    const d = tools.tools.find((x) => x.name === 'run_skill_script')!.description!;
    expect(d).toContain('working folder is a new, empty output folder');
    expect(d).toContain('come back as files');
    expect(
      Object.keys(tools.tools.find((x) => x.name === 'run_skill_script')!.inputSchema.properties!),
    ).toContain('module');
  });

  it('writes no bytecode into the skill folder (mounted read-only)', () => {
    expect(existsSync(join(t.dir, 'skills', 'package-style', 'scripts', '__pycache__'))).toBe(false);
  });
});
