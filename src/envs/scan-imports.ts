import { readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { basename, dirname, join } from 'node:path';
import type { Finding } from '../skills/types.js';
import type { EnvSpec } from './env-spec.js';
import { packageForModule } from './package-for-module.js';
import { PYTHON_STDLIB } from './python-stdlib.js';

/** A third-party import no declaration covers. */
export interface UndeclaredImport {
  kind: 'python' | 'node';
  /** Top-level module (Python) or package name (Node). */
  module: string;
  /** The package to declare. */
  package: string;
  /** Skill-relative file and 1-based line of the first import. */
  file: string;
  line: number;
}

const MAX_BYTES = 512 * 1024;
const PY_IMPORT =
  /^\s*(?:from\s+([A-Za-z_][\w.]*)\s+import\b|import\s+([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*))/;
const JS_IMPORT = /(?:\brequire\s*\(\s*|\bfrom\s+|\bimport\s*\(\s*|^\s*import\s+)['"]([^'"\n]+)['"]/g;
const NODE_BUILTINS = new Set(builtinModules);

/** PEP 503 normalized distribution name of a requirement line (`Pillow>=10` → `pillow`). */
export const requirementName = (line: string): string =>
  (/^[A-Za-z0-9][A-Za-z0-9._-]*/.exec(line)?.[0] ?? line).toLowerCase().replace(/[-_.]+/g, '-');

/** Names the skill's own files provide: every `.py` file's stem and every folder holding Python files. */
function ownModules(files: readonly { path: string }[]): Set<string> {
  const own = new Set<string>();
  for (const f of files) {
    if (!f.path.endsWith('.py')) continue;
    own.add(basename(f.path, '.py'));
    for (let d = dirname(f.path); d !== '.' && d !== ''; d = dirname(d)) own.add(basename(d));
  }
  return own;
}

const nodePackage = (spec: string): string | undefined => {
  if (spec.startsWith('.') || spec.startsWith('/') || spec.startsWith('node:') || spec.includes(':'))
    return undefined;
  const parts = spec.split('/');
  const name = spec.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
  return NODE_BUILTINS.has(name) ? undefined : name;
};

/**
 * Static scan of a skill's `.py` and `.js/.mjs/.cjs` files for third-party imports its environment does not declare
 * (stdlib, Node built-ins and the skill's own modules excluded). Lines are matched, code is never run; an import
 * inside `try:` still counts. One entry per module, at its first import.
 */
export function scanImports(
  dir: string,
  files: readonly { path: string }[],
  spec: EnvSpec,
): UndeclaredImport[] {
  const declaredPy = new Set(spec.python.map(requirementName));
  const declaredNode = new Set(Object.keys(spec.node));
  const own = ownModules(files);
  const seen = new Map<string, UndeclaredImport>();
  for (const f of files) {
    const py = f.path.endsWith('.py');
    const js = /\.(m|c)?js$/.test(f.path);
    if (!py && !js) continue;
    let text: string;
    try {
      const buf = readFileSync(join(dir, f.path));
      if (buf.length > MAX_BYTES) continue;
      text = buf.toString('utf8');
    } catch {
      continue;
    }
    text.split('\n').forEach((lineText, i) => {
      if (py) {
        const m = PY_IMPORT.exec(lineText);
        if (m === null) return;
        const mods = m[1] !== undefined ? [m[1]] : (m[2] ?? '').split(',').map((s) => s.trim());
        for (const mod of mods) {
          const top = mod.split('.')[0]!;
          if (top === '' || PYTHON_STDLIB.has(top) || own.has(top) || top === '__future__') continue;
          const pkg = packageForModule(top);
          if (declaredPy.has(requirementName(pkg)) || declaredPy.has(requirementName(top))) continue;
          if (!seen.has(`py:${top}`))
            seen.set(`py:${top}`, { kind: 'python', module: top, package: pkg, file: f.path, line: i + 1 });
        }
        return;
      }
      for (const m of lineText.matchAll(JS_IMPORT)) {
        const pkg = nodePackage(m[1] ?? '');
        if (pkg === undefined || declaredNode.has(pkg) || seen.has(`js:${pkg}`)) continue;
        seen.set(`js:${pkg}`, { kind: 'node', module: pkg, package: pkg, file: f.path, line: i + 1 });
      }
    });
  }
  return [...seen.values()];
}

/** The lint finding for an undeclared import, with the declaration that would cover it. */
export function undeclaredFinding(skillDir: string, skill: string, u: UndeclaredImport): Finding {
  const how =
    u.kind === 'python'
      ? `add "${u.package}" to requirements.txt (or a PEP 723 block), or in skills-mcp.yaml: dependencies: { skills: { ${skill}: { python: [${u.package}] } } }`
      : `add "${u.package}" to package.json dependencies, or in skills-mcp.yaml: dependencies: { skills: { ${skill}: { node: [${u.package}] } } }`;
  return {
    path: join(skillDir, u.file),
    line: u.line,
    rule: 'undeclared-import',
    severity: 'warning',
    message: `imports "${u.module}"${u.package === u.module ? '' : ` (package ${u.package})`}, which no declared environment provides: ${how}`,
  };
}
