import { lstatSync } from 'node:fs';
import { join } from 'node:path';
import { SkillsError } from '../errors.js';
import { PYTHON_STDLIB } from '../envs/python-stdlib.js';

const MODULE = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

const isFile = (p: string) => lstatSync(p, { throwIfNoEntry: false })?.isFile() === true;

/**
 * The file `python3 -m <module>` runs from the skill root: `a/b.py`, or `a/b/__main__.py` for a package. Only
 * modules of the skill itself, and only where Python is sure to pick the skill's file (the file is what the call
 * binds to and the approval shows): the top-level name is not one of the standard library (Python finds built-in,
 * frozen and already imported modules before the skill's), and every package on the way is a regular package
 * (`__init__.py`): a folder without one is a namespace portion, which loses to a package of the same name anywhere
 * later on the path (the standard library, site-packages, the environment).
 */
export function resolveModule(skillDir: string, skillName: string, module: string): string {
  if (module.length > 200 || !MODULE.test(module)) {
    throw new SkillsError('INPUT_INVALID', `"${module.slice(0, 200)}" is not a Python module name`, {
      hint: 'Give a dotted module of the skill, e.g. "scripts.package_skill" (as in `python -m scripts.package_skill`).',
    });
  }
  const parts = module.split('.');
  const top = parts[0] ?? '';
  if (top.startsWith('_') || PYTHON_STDLIB.has(top)) {
    throw new SkillsError(
      'INPUT_INVALID',
      `"${module}" names a standard library module, not one of the skill`,
      {
        hint: `Python would run its own "${top}" instead of a file of skill "${skillName}"; run the skill's scripts by path with "script".`,
      },
    );
  }
  const base = parts.join('/');
  const candidates: [string, string[]][] = [
    [`${base}.py`, parts.slice(0, -1)],
    [`${base}/__main__.py`, parts],
  ];
  for (const [rel, packages] of candidates) {
    if (!isFile(join(skillDir, rel))) continue;
    const plain = packages.findIndex(
      (_, i) => !isFile(join(skillDir, ...packages.slice(0, i + 1), '__init__.py')),
    );
    if (plain >= 0) {
      const folder = packages.slice(0, plain + 1).join('/');
      throw new SkillsError('INPUT_INVALID', `"${folder}/" of skill "${skillName}" has no __init__.py`, {
        hint: `Without it Python may run a same-named package from elsewhere instead of ${rel}; run it by path with "script": "${rel}".`,
      });
    }
    return rel;
  }
  throw new SkillsError('SCRIPT_NOT_FOUND', `skill "${skillName}" has no module "${module}"`, {
    hint: `Looked for ${base}.py and ${base}/__main__.py in the skill folder; modules run from the skill root.`,
  });
}
