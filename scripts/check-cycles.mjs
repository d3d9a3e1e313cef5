// Import cycles in src/: walks every TypeScript import and re-export (type-only ones too, and `import('…')`),
// resolves `./x.js` to `./x.ts` (or `./x/index.ts`), and prints each cycle found. Exits 1 when there is one.
// Usage: node scripts/check-cycles.mjs [folder]   (default: src)
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(process.argv[2] ?? 'src');

/** Every .ts file under `dir` (declaration files left out). */
function tsFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) out.push(...tsFiles(p));
    else if (name.endsWith('.ts') && !name.endsWith('.d.ts')) out.push(p);
  }
  return out;
}

// `import … from '…'`, `import type …`, `export … from '…'`, `import '…'`, `import('…')`.
const SPECIFIERS = [
  /\b(?:import|export)\s+(?:type\s+)?[^'";]*?\bfrom\s*['"]([^'"]+)['"]/g,
  /\bimport\s*['"]([^'"]+)['"]/g,
  /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
];

/** Comments out, so that an import named in a comment is not one. */
const code = (text) => text.replace(/\/\*[\s\S]*?\*\//g, '').replace(/(^|[^:'"`])\/\/.*$/gm, '$1');

function resolveImport(from, spec) {
  if (!spec.startsWith('.')) return undefined;
  const base = resolve(dirname(from), spec);
  for (const p of [base.replace(/\.js$/, '.ts'), `${base}.ts`, join(base, 'index.ts')])
    if (existsSync(p) && statSync(p).isFile()) return p;
  return undefined;
}

const files = tsFiles(root);
const edges = new Map();
for (const f of files) {
  const text = code(readFileSync(f, 'utf8'));
  const to = new Set();
  for (const re of SPECIFIERS)
    for (const m of text.matchAll(re)) {
      const target = resolveImport(f, m[1]);
      if (target !== undefined) to.add(target);
    }
  edges.set(f, [...to].sort());
}

// Tarjan's strongly connected components: each component of more than one file (or a file importing itself) holds
// a cycle; one cycle of each is printed, found by a walk inside the component.
let index = 0;
const idx = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const components = [];
function connect(v) {
  idx.set(v, index);
  low.set(v, index++);
  stack.push(v);
  onStack.add(v);
  for (const w of edges.get(v) ?? []) {
    if (!idx.has(w)) {
      connect(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
  }
  if (low.get(v) !== idx.get(v)) return;
  const c = [];
  let w;
  do {
    w = stack.pop();
    onStack.delete(w);
    c.push(w);
  } while (w !== v);
  if (c.length > 1 || (edges.get(v) ?? []).includes(v)) components.push(c);
}
for (const f of files) if (!idx.has(f)) connect(f);

function cycleIn(component) {
  const inside = new Set(component);
  const start = [...component].sort()[0];
  const path = [start];
  const seen = new Set([start]);
  const walk = (v) => {
    for (const w of edges.get(v) ?? []) {
      if (!inside.has(w)) continue;
      if (w === start) return true;
      if (seen.has(w)) continue;
      seen.add(w);
      path.push(w);
      if (walk(w)) return true;
      path.pop();
    }
    return false;
  };
  walk(start);
  return [...path, start];
}

const show = (p) => relative(process.cwd(), p);
for (const c of components) console.error(`import cycle: ${cycleIn(c).map(show).join(' → ')}`);
console.log(`${files.length} files, ${components.length} import cycle${components.length === 1 ? '' : 's'}`);
process.exitCode = components.length === 0 ? 0 : 1;
