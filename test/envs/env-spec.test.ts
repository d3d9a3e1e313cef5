import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { envId } from '../../src/envs/env-id.js';
import { parseRequirements, pep723Dependencies, readEnvSpec } from '../../src/envs/env-spec.js';
import { explainMissing, findMissing } from '../../src/envs/explain-missing.js';
import { parsePipConfigList, pipSettings, redactUrl } from '../../src/envs/pip-config.js';

const dir = mkdtempSync(join(tmpdir(), 'skills-mcp-envspec-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('reading what a skill declares', () => {
  it('keeps package lines of requirements.txt, drops comments, and refuses options, URLs and paths', () => {
    expect(
      parseRequirements('# c\npypdf>=4  # pdf\n\nPillow[extra] == 10.0\nnumpy; python_version>"3"\n', 'r'),
    ).toEqual(['pypdf>=4', 'Pillow[extra] == 10.0', 'numpy; python_version>"3"']);
    for (const bad of [
      '--index-url https://evil/simple',
      '-e .',
      '-r other.txt',
      'https://x/y.whl',
      './local',
      '/abs',
      // pip reads these as a URL, a path or options although they start like a package name
      'pkg @ file:/etc/passwd',
      'pkg@file:etc',
      'pkg @ git+ssh:git@host:x',
      'pypdf --global-option=--x',
      'pypdf\t--config-settings=a=b',
      'pypdf; python_version >= "3" --hash=sha256:00',
      'pypdf \\',
      'pyp\u0000df',
      'pypdf>=1\u2024',
    ])
      expect(() => parseRequirements(bad, 'requirements.txt')).toThrow(/requirements\.txt/);
  });

  it('refuses Node dependencies that are URLs, git, links, aliases, paths outside the skill or odd names', () => {
    for (const [name, range] of [
      ['x', 'git+https://host/x.git'],
      ['x', 'github:user/repo'],
      ['x', 'user/repo'],
      ['x', 'https://host/x.tgz'],
      ['x', 'link:../other'],
      ['x', 'npm:other@1'],
      ['x', 'file:/root/.ssh'],
      ['x', 'file:../other-skill/vendor/x.tgz'],
      ['x', 'file:vendor/../../x'],
      ['x', '..'], // npm reads a spec starting with a dot as a folder path
      ['x', '.'],
      ['x', '.hidden'],
      ['x', ' ..'],
      ['\u001b]0;pwned\u0007', '1.0.0'],
      ['../x', '1.0.0'],
    ]) {
      writeFileSync(join(dir, 'package.json'), JSON.stringify({ dependencies: { [name!]: range } }));
      expect(() => readEnvSpec(dir, [])).toThrow(/package\.json/);
    }
    rmSync(join(dir, 'package.json'));
  });

  it('never reads a declaration through a link that leaves the skill folder', () => {
    const skill = join(dir, 'linked');
    mkdirSync(skill);
    writeFileSync(join(dir, 'secret.txt'), 'TOP-SECRET-CANARY\n');
    symlinkSync(join(dir, 'secret.txt'), join(skill, 'requirements.txt'));
    let message = '';
    try {
      readEnvSpec(skill, []);
    } catch (e) {
      message = `${(e as Error).message} ${(e as { hint?: string }).hint ?? ''}`;
    }
    expect(message).toContain('requirements.txt leaves the skill folder');
    expect(message).not.toContain('CANARY');
  });

  it('identifies a `file:` Node dependency by its content, so skills vendoring different tarballs never share', () => {
    const rt = { node: 'node-abi115 linux-x64' };
    const spec = (content: string) => {
      const skill = mkdtempSync(join(dir, 'vendor-'));
      mkdirSync(join(skill, 'pkg', 'package'), { recursive: true });
      writeFileSync(join(skill, 'pkg', 'package', 'package.json'), '{"name":"x","version":"1.0.0"}');
      writeFileSync(join(skill, 'pkg', 'package', 'index.js'), content);
      mkdirSync(join(skill, 'vendor'));
      const tar = execFileSync('tar', [
        '-c',
        '--mtime=@0',
        '--owner=0',
        '--group=0',
        '-C',
        join(skill, 'pkg'),
        'package',
      ]);
      writeFileSync(join(skill, 'vendor', 'x.tgz'), gzipSync(tar));
      writeFileSync(
        join(skill, 'package.json'),
        JSON.stringify({ dependencies: { x: 'file:vendor/x.tgz' } }),
      );
      return readEnvSpec(skill, []);
    };
    const a = spec('skill A'),
      b = spec('skill B');
    expect(a.node).toEqual(b.node);
    expect(envId(a, rt, false)).not.toBe(envId(b, rt, false));
    expect(envId(a, rt, false)).toBe(envId(spec('skill A'), rt, false));
  });

  it('reads PEP 723 dependencies over several lines and ignores [tool] tables', () => {
    const src = [
      '#!/usr/bin/env python3',
      '# /// script',
      '# requires-python = ">=3.10"',
      '# dependencies = [',
      '#   "pypdf>=4",  # comment',
      "#   'pillow',",
      '# ]',
      '# [tool.uv]',
      '# dependencies = ["not-this"]',
      '# ///',
      'import pypdf',
    ].join('\n');
    expect(pep723Dependencies(src, 's.py')).toEqual(['pypdf>=4', 'pillow']);
    expect(pep723Dependencies('print(1)\n', 's.py')).toBeUndefined();
  });

  it('merges requirements.txt, scripts/requirements.txt, PEP 723 blocks and the operator override, sorted', () => {
    mkdirSync(join(dir, 'scripts'), { recursive: true });
    writeFileSync(join(dir, 'requirements.txt'), 'b\n');
    writeFileSync(join(dir, 'scripts', 'requirements.txt'), 'a\nb\n');
    writeFileSync(join(dir, 'scripts', 't.py'), '# /// script\n# dependencies = ["c"]\n# ///\n');
    const files = [
      { path: 'requirements.txt' },
      { path: 'scripts/requirements.txt' },
      { path: 'scripts/t.py' },
    ];
    const spec = readEnvSpec(dir, files, { python: ['d'], node: ['left-pad@1.3.0'] });
    expect(spec).toEqual({
      python: ['a', 'b', 'c', 'd'],
      node: { 'left-pad': '1.3.0' },
      sources: ['requirements.txt', 'scripts/requirements.txt', 'scripts/t.py', 'skills-mcp.yaml'],
    });
  });

  it('gives a new identity when the spec, the interpreter or allow_source changes', () => {
    const spec = { python: ['a'], node: {}, sources: [] };
    const rt = { python: 'cpython-3.11.7 linux-x86_64' };
    const id = envId(spec, rt, false);
    expect(id).toMatch(/^[0-9a-f]{64}$/);
    expect(envId({ ...spec, sources: ['x'] }, rt, false)).toBe(id); // where it was declared does not matter
    expect(envId({ ...spec, python: ['a==2'] }, rt, false)).not.toBe(id);
    expect(envId(spec, { python: 'cpython-3.12.1 linux-x86_64' }, false)).not.toBe(id);
    expect(envId(spec, rt, true)).not.toBe(id);
  });
});

describe('the operator pip settings an install honours', () => {
  it('prefers environment settings over files, mounts local indexes, and hides credentials', () => {
    const cfg = parsePipConfigList(
      [
        "global.index-url='https://user:pa55@pypi.example/simple'",
        "global.find-links='/opt/wheels'",
        ":env:.find-links='/tmp'",
        "global.keyring-provider='import'",
      ].join('\n'),
    );
    expect([...cfg]).toEqual([
      ['index-url', 'https://user:pa55@pypi.example/simple'],
      ['find-links', '/tmp'],
    ]);
    const s = pipSettings(cfg);
    expect(s.env).toMatchObject({ PIP_CONFIG_FILE: '/dev/null', PIP_FIND_LINKS: '/tmp' });
    expect(s.mounts).toEqual(['/tmp']);
    expect(s.sources.join(' ')).not.toContain('pa55');
    expect(redactUrl('https://u:p@h/x')).toBe('https://***@h/x');
  });
});

describe('naming what a failed run was missing', () => {
  it.each([
    [
      "Traceback…\nModuleNotFoundError: No module named 'PIL'",
      'Missing Python module "PIL" (package pillow)',
    ],
    [
      // `yaml` itself was found: the installed one lacks the submodule.
      "ModuleNotFoundError: No module named 'yaml.constructor'",
      'Python package PyYAML is installed, but it has no module "yaml.constructor"',
    ],
    [
      "ModuleNotFoundError: No module named 'pypdf.annotations'",
      'pin a newer version for the skill: the line `pypdf>=<the version the skill needs>`',
    ],
    ["ModuleNotFoundError: No module named 'fitz'", 'package PyMuPDF'],
    ["ModuleNotFoundError: No module named 'cv2'", 'package opencv-python'],
    ["ModuleNotFoundError: No module named 'bs4'", 'package beautifulsoup4'],
    ["ModuleNotFoundError: No module named 'sklearn'", 'package scikit-learn'],
    ["ModuleNotFoundError: No module named 'pptx'", 'package python-pptx'],
    ["Error: Cannot find module 'marked'\nRequire stack:", 'Missing Node package "marked"'],
    ["Error [ERR_MODULE_NOT_FOUND]: Cannot find package '@scope/pkg' imported from /x.mjs", '"@scope/pkg"'],
    ['/s/thumbs.sh: line 3: pdftoppm: command not found', 'apt-get install poppler-utils'],
    ["FileNotFoundError: [Errno 2] No such file or directory: 'soffice'", 'apt-get install libreoffice'],
  ])('%s', (stderr, expected) => {
    const m = findMissing(stderr);
    expect(m).toBeDefined();
    expect(explainMissing(m!, 'pdf')).toContain(expected);
  });

  it('ignores relative modules, file paths and names that are not names', () => {
    expect(findMissing("Error: Cannot find module './local'")).toBeUndefined();
    expect(
      findMissing("FileNotFoundError: [Errno 2] No such file or directory: '/data/in.csv'"),
    ).toBeUndefined();
    expect(findMissing("ModuleNotFoundError: No module named '$(rm -rf)'")).toBeUndefined();
  });

  it('names the installed version when a package lacks an imported name, and stays silent when it is unknown', () => {
    const m = findMissing(
      "ImportError: cannot import name 'PdfWriter' from 'pypdf' (/e/python/pypdf/__init__.py)",
    );
    expect(m).toMatchObject({ kind: 'python-module', module: 'pypdf', name: 'PdfWriter' });
    expect(explainMissing(m!, 'pdf', '3.4.1')).toContain(
      'Python package pypdf 3.4.1 is installed, but its module "pypdf" has no "PdfWriter"',
    );
    expect(explainMissing(m!, 'pdf', '3.4.1')).toContain('`pypdf>3.4.1`');
    // The skill's own module, or a circular import: no package to blame.
    expect(explainMissing(m!, 'pdf')).toBeUndefined();
  });
});
