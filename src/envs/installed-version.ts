import { lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Entries of one folder looked at, at most: a site-packages folder holds a few thousand. */
const MAX_ENTRIES = 20_000;

/** PEP 503 normal form: `Python_Docx` → `python-docx`. */
const normal = (name: string) => name.toLowerCase().replace(/[-_.]+/g, '-');

const exists = (p: string) => lstatSync(p, { throwIfNoEntry: false }) !== undefined;

/** Whether `dir` holds the top-level module `module` (a package folder or a `.py` file). */
const holdsModule = (dir: string, module: string) =>
  exists(join(dir, module, '__init__.py')) || exists(join(dir, `${module}.py`)) || exists(join(dir, module));

/**
 * The version of distribution `dist`, as Python would import its top-level `module`: the first folder of `dirs` (in
 * `sys.path` order) that holds the module, and there the `*.dist-info` or `*.egg-info` folder of `dist`, read by name
 * only (`pypdf-3.4.1.dist-info`); nothing inside is opened, so a hostile environment can only name a version.
 */
export function installedVersion(
  dist: string,
  module: string,
  dirs: readonly string[],
): { version: string; dir: string } | undefined {
  if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,100}$/.test(module)) return undefined;
  const want = normal(dist);
  for (const dir of dirs) {
    if (!holdsModule(dir, module)) continue;
    let names: string[];
    try {
      names = readdirSync(dir).slice(0, MAX_ENTRIES);
    } catch {
      return undefined;
    }
    for (const n of names) {
      const m =
        /^([A-Za-z0-9][A-Za-z0-9._]{0,200}?)-(\d[A-Za-z0-9.+!]{0,60}?)(?:-py\d[\d.]*)?\.(?:dist|egg)-info$/.exec(
          n,
        );
      if (m !== null && normal(m[1]!) === want) return { version: m[2]!, dir };
    }
    return undefined;
  }
  return undefined;
}
