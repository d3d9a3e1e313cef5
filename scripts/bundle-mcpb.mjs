// Builds the MCP Bundle (.mcpb) for Claude Desktop: manifest, the built CLI, the bundled skills and sandbox profiles,
// and the run-time packages it loads, but not better-sqlite3: hosts refuse unsigned native modules (Claude Desktop on
// macOS runs a bundle's Node code with library validation), so the bundle's audit log is on Node's own node:sqlite.
// Usage: node scripts/bundle-mcpb.mjs [OUT.mcpb]   (after `npm run build`; `npm run bundle:mcpb` does both)
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const out = resolve(process.argv[2] ?? join(root, `skills-mcp-${pkg.version}.mcpb`));
const stage = join(root, 'build', 'mcpb');
const server = join(stage, 'server');
/** Native modules stay out; the code falls back to node:sqlite, which the manifest's env selects. */
const leftOut = new Set(['better-sqlite3']);

if (!existsSync(join(root, 'dist', 'cli.js'))) {
  console.error('bundle-mcpb: dist/cli.js is missing: run `npm run build` first (or `npm run bundle:mcpb`)');
  process.exit(2);
}
rmSync(stage, { recursive: true, force: true });
mkdirSync(server, { recursive: true });

const manifest = JSON.parse(readFileSync(join(root, 'mcpb', 'manifest.json'), 'utf8'));
writeFileSync(
  join(stage, 'manifest.json'),
  `${JSON.stringify({ ...manifest, version: pkg.version }, null, 2)}\n`,
);
cpSync(join(root, 'LICENSE'), join(stage, 'LICENSE'));
cpSync(join(root, 'mcpb', 'entry.mjs'), join(server, 'entry.mjs'));

// What the npm package ships that the server reads at run time (docs stay on the web).
for (const entry of pkg.files) {
  if (entry.includes('*') || /^(README|CHANGELOG)/.test(entry) || entry.startsWith('docs')) continue;
  cpSync(join(root, entry), join(server, entry), { recursive: true });
}
const { name, version, license, type, engines } = pkg;
const dependencies = Object.fromEntries(
  Object.entries(pkg.dependencies).filter(([dep]) => !leftOut.has(dep)),
);
writeFileSync(
  join(server, 'package.json'),
  `${JSON.stringify({ name, version, license, type, engines, dependencies }, null, 2)}\n`,
);

// The run-time dependency closure, copied from this checkout's node_modules (no download).
const copied = new Set();
const copy = (dep) => {
  if (copied.has(dep) || leftOut.has(dep)) return;
  copied.add(dep);
  const from = join(root, 'node_modules', dep);
  cpSync(from, join(server, 'node_modules', dep), { recursive: true, dereference: true });
  const { dependencies: deps = {}, optionalDependencies: optional = {} } = JSON.parse(
    readFileSync(join(from, 'package.json'), 'utf8'),
  );
  for (const next of [...Object.keys(deps), ...Object.keys(optional)]) {
    if (existsSync(join(from, 'node_modules', next))) continue; // nested: copied with its parent
    if (existsSync(join(root, 'node_modules', next))) copy(next);
  }
};
for (const dep of Object.keys(dependencies)) copy(dep);

const mcpb = join(root, 'node_modules', '.bin', 'mcpb');
execFileSync(mcpb, ['validate', join(stage, 'manifest.json')], { stdio: 'inherit' });
rmSync(out, { force: true });
execFileSync(mcpb, ['pack', stage, out], { stdio: 'inherit' });
console.error(`bundle-mcpb: wrote ${out} (${copied.size} run-time packages, no native modules)`);
