import { lstatSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const MAX = 2000;

/** A real folder, reached without following a link (the installer wrote these trees: they are hostile). */
const isRealDir = (p: string) => lstatSync(p, { throwIfNoEntry: false })?.isDirectory() === true;
const NAME = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,200}$/;

/** `name==version` of the `*.dist-info` folders pip wrote into a target folder (names only, never file contents). */
export function installedPythonDists(target: string): string[] {
  if (!isRealDir(target)) return [];
  let names: string[];
  try {
    names = readdirSync(target);
  } catch {
    return [];
  }
  return names
    .filter((n) => n.endsWith('.dist-info'))
    .slice(0, MAX)
    .map((n) => n.slice(0, -'.dist-info'.length))
    .map((n) => {
      const i = n.lastIndexOf('-');
      return i > 0 ? `${n.slice(0, i)}==${n.slice(i + 1)}` : n;
    })
    .filter((n) => NAME.test(n.replace('==', '-')))
    .sort();
}

/** `name@version` of the packages in `<prefix>/node_modules` (bounded reads of regular package.json files only). */
export function installedNodePackages(prefix: string): string[] {
  const out: string[] = [];
  const nm = join(prefix, 'node_modules');
  if (!isRealDir(prefix) || !isRealDir(nm)) return [];
  const read = (dir: string) => {
    const file = join(dir, 'package.json');
    const st = lstatSync(file, { throwIfNoEntry: false });
    if (st?.isFile() !== true || st.size > 1024 * 1024) return;
    try {
      const p = JSON.parse(readFileSync(file, 'utf8')) as { name?: unknown; version?: unknown };
      if (
        typeof p.name === 'string' &&
        typeof p.version === 'string' &&
        p.name.length < 215 &&
        p.version.length < 100
      )
        out.push(`${p.name}@${p.version}`);
    } catch {
      // not a package
    }
  };
  let names: string[];
  try {
    names = readdirSync(nm);
  } catch {
    return [];
  }
  for (const n of names.slice(0, MAX)) {
    if (n.startsWith('.')) continue;
    const d = join(nm, n);
    if (lstatSync(d).isSymbolicLink()) continue;
    if (n.startsWith('@')) for (const s of readdirSync(d).slice(0, MAX)) read(join(d, s));
    else read(d);
  }
  return out.sort();
}
