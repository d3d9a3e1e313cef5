// Runs every benchmark in order (or the ones named on the command line), each in its own process.
// Each bench prints a table to stdout and writes bench/results/<name>.json.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const all = readdirSync(here)
  .filter((f) => f.endsWith('.bench.mjs'))
  .map((f) => f.replace(/\.bench\.mjs$/, ''))
  .sort();
const wanted = process.argv.slice(2);
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length > 0) {
  console.error(`unknown bench: ${unknown.join(', ')} (have: ${all.join(', ')})`);
  process.exit(2);
}
let failed = 0;
for (const name of wanted.length > 0 ? wanted : all) {
  console.log(`\n== ${name} ==`);
  const r = spawnSync(process.execPath, [join(here, `${name}.bench.mjs`)], { stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed > 0 ? 1 : 0);
