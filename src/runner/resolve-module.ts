import { SkillsError } from '../errors.js';
import { PYTHON_STDLIB } from '../envs/python-stdlib.js';

const MODULE = /^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$/;

/** What Python's path finder makes of one name in one folder, in its order: package, then module, then namespace. */
type Found =
  | { kind: 'package' | 'namespace'; path: string }
  | { kind: 'module'; file: string }
  | { kind: 'native'; file: string }
  | { kind: 'none'; path: string };

/** An extension module for `name`: `name.so`, `name.abi3.so`, `name.cpython-311-x86_64-linux-gnu.so`. */
const nativeIn = (files: ReadonlySet<string>, folder: string, name: string): string | undefined => {
  const prefix = folder === '' ? name : `${folder}/${name}`;
  for (const f of files) {
    if (f.startsWith(`${prefix}.`) && f.endsWith('.so') && /^(\.[^./]+)?\.so$/.test(f.slice(prefix.length)))
      return f;
  }
  return undefined;
};

/**
 * Python's `FileFinder` for `name` in `folder` (a POSIX path of the copy, '' for its root): a folder holding
 * `__init__` is a regular package; else a `name.<suffix>` file is a module (extension suffixes before `.py`); else a
 * folder is a namespace portion. Bytecode (`.pyc`) is never part of a bundle copy, so it is never found.
 */
function find(files: ReadonlySet<string>, dirs: ReadonlySet<string>, folder: string, name: string): Found {
  const path = folder === '' ? name : `${folder}/${name}`;
  if (dirs.has(path)) {
    const native = nativeIn(files, path, '__init__');
    if (native !== undefined) return { kind: 'native', file: native };
    if (files.has(`${path}/__init__.py`)) return { kind: 'package', path };
  }
  const native = nativeIn(files, folder, name);
  if (native !== undefined) return { kind: 'native', file: native };
  if (files.has(`${path}.py`)) return { kind: 'module', file: `${path}.py` };
  return dirs.has(path) ? { kind: 'namespace', path } : { kind: 'none', path };
}

const invalid = (message: string, hint: string) => new SkillsError('INPUT_INVALID', message, { hint });

/**
 * The file `python3 -m <module>` runs from the skill's bundle copy, found as Python finds it: `files` are the
 * paths of the copy (the bundle entries: links are regular files there, caches and bytecode are absent).
 *
 * In each folder Python takes a regular package (`name/__init__.py`) before a module file (`name.py`) before a
 * namespace folder; a package runs its `__main__.py` after its `__init__.py`; every parent must be a package
 * (its `__init__.py` runs first, and is part of the bundle). Refused, each with a tool error saying why:
 * - a top-level name of the standard library (built-in, frozen and already imported modules come before any
 *   folder on the path);
 * - a top-level namespace folder (no `__init__.py`): Python prefers a package or module of that name anywhere
 *   later on its path (the environment, site-packages, a `.pth` hook) over it, which the server cannot see from
 *   here. A namespace folder inside a regular package is searched only there, so it is followed;
 * - an extension module (`.so`) where Python would load it: native code, nothing a person can read.
 * The skill root is the first folder on the path that holds anything (the working folder, ahead of it, starts empty).
 * Only Python has a module form.
 */
export function resolveModule(files: readonly string[], skillName: string, module: string): string {
  if (module.length > 200 || !MODULE.test(module)) {
    throw invalid(
      `"${module.slice(0, 200)}" is not a Python module name`,
      'Give a dotted module of the skill, e.g. "scripts.package_skill" (as in `python -m scripts.package_skill`).',
    );
  }
  const parts = module.split('.');
  const top = parts[0] ?? '';
  if (top.startsWith('_') || PYTHON_STDLIB.has(top)) {
    throw invalid(
      `"${module}" names a standard library module, not one of the skill`,
      `Python would run its own "${top}" instead of a file of skill "${skillName}"; run the skill's scripts by path with "script".`,
    );
  }
  const fileSet = new Set(files);
  const dirs = new Set<string>();
  for (const f of files)
    for (let i = f.indexOf('/'); i > 0; i = f.indexOf('/', i + 1)) dirs.add(f.slice(0, i));

  const notFound = (what: string) =>
    new SkillsError('SCRIPT_NOT_FOUND', `skill "${skillName}" has no module "${module}": ${what}`, {
      hint: 'Modules run from the skill root, as with `python -m` there; or run the file by path with "script".',
    });
  const native = (file: string) =>
    invalid(
      `Python would load the compiled extension ${file} for "${module}"`,
      'Extension modules are native code nobody can review in the approval; run a Python source file with "script".',
    );
  let folder = '';
  for (let i = 0; i < parts.length; i++) {
    const name = parts[i]!;
    const dotted = parts.slice(0, i + 1).join('.');
    const found = find(fileSet, dirs, folder, name);
    if (found.kind === 'native') throw native(found.file);
    if (found.kind === 'none')
      throw notFound(`neither ${found.path}/__init__.py nor ${found.path}.py exists`);
    if (found.kind === 'namespace' && i === 0) {
      throw invalid(
        `"${found.path}/" of skill "${skillName}" has no __init__.py, so Python may run a "${name}" from elsewhere`,
        `A top-level folder without __init__.py loses to any package or module "${name}" later on Python's path; run the file by path with "script", or the skill can add ${found.path}/__init__.py.`,
      );
    }
    const last = i === parts.length - 1;
    if (found.kind === 'module') {
      if (last) return found.file;
      throw notFound(`"${dotted}" is the module ${found.file}, not a package`);
    }
    if (!last) {
      folder = found.path;
      continue;
    }
    // A package (regular, or a namespace inside one): Python runs its __main__, which must be a module.
    const main = find(fileSet, dirs, found.path, '__main__');
    if (main.kind === 'module') return main.file;
    if (main.kind === 'native') throw native(main.file);
    if (main.kind === 'none') throw notFound(`"${dotted}" is a package without __main__.py`);
    throw invalid(
      `${main.path}/ is a package; Python cannot run a package as __main__`,
      `Run a module file of skill "${skillName}" instead.`,
    );
  }
  throw notFound('empty name');
}
