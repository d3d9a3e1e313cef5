// Where a V8 CPU profile (node --cpu-prof) spent its time: self time by function and by module, the top rows.
// Usage: node bench/profile-summary.mjs <file.cpuprofile> [rows (default 20)]
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import process from 'node:process';
import { out, round, table } from './support.mjs';

const [file, rowsArg] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write('usage: node bench/profile-summary.mjs <file.cpuprofile> [rows]\n');
  process.exit(2);
}
const rows = Number(rowsArg ?? 20);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
// Self time per node: each sample is one node, each time delta the time until the next sample.
const self = new Map();
profile.samples.forEach((id, i) => self.set(id, (self.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0) / 1000));
const total = [...self.values()].reduce((a, b) => a + b, 0);

/** A module's name: the package in node_modules, the file of this build, or a V8/Node category. */
const moduleOf = (url) => {
  if (url === '') return '(native, GC, idle)';
  const pkg = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (pkg) return pkg[1];
  if (url.startsWith('node:')) return url;
  return basename(url);
};
const fnSum = new Map();
const modSum = new Map();
for (const [id, ms] of self) {
  const { callFrame: f } = byId.get(id);
  const fn = `${f.functionName || '(anonymous)'} ${moduleOf(f.url)}:${f.lineNumber + 1}`;
  fnSum.set(fn, (fnSum.get(fn) ?? 0) + ms);
  const mod = moduleOf(f.url);
  modSum.set(mod, (modSum.get(mod) ?? 0) + ms);
}
const top = (m, label) => {
  const t = [[label, 'self ms', '%']];
  for (const [k, ms] of [...m].sort((a, b) => b[1] - a[1]).slice(0, rows))
    t.push([k, round(ms, 1), round((100 * ms) / total, 1)]);
  table(t);
};
out(`${file}: ${round(total, 0)} ms sampled`);
top(fnSum, 'function');
out('');
top(modSum, 'module');
