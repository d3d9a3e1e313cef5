import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { isSkillsError } from '../../src/errors.js';
import { resolveModule } from '../../src/runner/resolve-module.js';
import { tempDir } from '../helpers/temp-dir.js';

/** Layouts of a bundle copy, a module, and the file `python3 -m` runs there (or the code it is refused with). */
const CASES: [string, string[], string, string][] = [
  ['a module file', ['tools/__init__.py', 'tools/x.py'], 'tools.x', 'tools/x.py'],
  [
    'a package over a module file',
    ['s/__init__.py', 's/foo.py', 's/foo/__init__.py', 's/foo/__main__.py'],
    's.foo',
    's/foo/__main__.py',
  ],
  [
    'a module file over a namespace folder',
    ['s/__init__.py', 's/foo.py', 's/foo/__main__.py'],
    's.foo',
    's/foo.py',
  ],
  ['a namespace inside a package', ['s/__init__.py', 's/ns/__main__.py'], 's.ns', 's/ns/__main__.py'],
  ['a module inside a namespace inside a package', ['s/__init__.py', 's/ns/m.py'], 's.ns.m', 's/ns/m.py'],
  ['a top-level module over a namespace folder', ['tool.py', 'tool/__main__.py'], 'tool', 'tool.py'],
  ['a top-level package', ['tool/__init__.py', 'tool/__main__.py', 'tool.py'], 'tool', 'tool/__main__.py'],
  ['__main__ named directly', ['p/__init__.py', 'p/__main__.py'], 'p.__main__', 'p/__main__.py'],
  ['a top-level namespace folder', ['scripts/foo.py'], 'scripts.foo', 'INPUT_INVALID'],
  ['a package without __main__', ['p/__init__.py'], 'p', 'SCRIPT_NOT_FOUND'],
  ['a module used as a package', ['p/__init__.py', 'p/m.py', 'p/m/x.py'], 'p.m.x', 'SCRIPT_NOT_FOUND'],
  ['a package as __main__', ['p/__init__.py', 'p/__main__/__init__.py'], 'p', 'INPUT_INVALID'],
  [
    'an extension module over a source file',
    ['p/__init__.py', 'p/m.py', 'p/m.abi3.so'],
    'p.m',
    'INPUT_INVALID',
  ],
  [
    'an extension package init',
    ['p/__init__.py', 'p/q/__init__.cpython-311-x86_64-linux-gnu.so', 'p/q/__main__.py'],
    'p.q',
    'INPUT_INVALID',
  ],
  ['a standard library name', ['json/__init__.py', 'json/__main__.py'], 'json', 'INPUT_INVALID'],
  ['nothing of that name', ['p/__init__.py'], 'p.none', 'SCRIPT_NOT_FOUND'],
];

const outcome = (files: string[], module: string): string => {
  try {
    return resolveModule(files, 'sk', module);
  } catch (e) {
    if (isSkillsError(e)) return e.code;
    throw e;
  }
};

describe('resolveModule', () => {
  it.each(CASES)('%s', (_what, files, module, expected) => {
    expect(outcome(files, module)).toBe(expected);
  });

  // The table is checked against the interpreter itself: each file prints its own path when it runs.
  it.each(CASES.filter(([, , , e]) => e.endsWith('.py')))(
    'is what python3 runs: %s',
    (_what, files, module, expected) => {
      const t = tempDir();
      try {
        const root = join(t.dir, 'copy');
        for (const f of files) {
          mkdirSync(dirname(join(root, f)), { recursive: true });
          writeFileSync(join(root, f), `print(${JSON.stringify(f)})\n`);
        }
        const cwd = join(t.dir, 'files');
        mkdirSync(cwd);
        const out = execFileSync('python3', ['-m', module], {
          cwd,
          env: { PATH: process.env.PATH ?? '/usr/bin', PYTHONPATH: root, PYTHONDONTWRITEBYTECODE: '1' },
          encoding: 'utf8',
        });
        expect(out.trim().split('\n').at(-1)).toBe(expected);
      } finally {
        t.cleanup();
      }
    },
  );
});
