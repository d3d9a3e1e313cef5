// A server stand-in that hands the sandbox a run whose go never comes, for the launcher's start-byte test:
//   node hold-run.mjs <dist folder> <plan as JSON> [warm]
// Runs the plan with a `ready` that never settles, says "held" on stdout once the launcher had time to read its
// message, then waits to be killed. With `warm`, a run of `python3 -c pass` with the same plan comes first, so the
// held run gets a launcher the pool made ready for it (as root, for a folder only root can reach, one pre-staged: it
// forks its waiter before the start byte).
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

const [dist, planJson, warm] = process.argv.slice(2);
const { createSandbox } = await import(pathToFileURL(`${dist}/sandbox/index.js`).href);
const { silentLogger } = await import(pathToFileURL(`${dist}/log.js`).href);

const plan = JSON.parse(planJson);
const sandbox = createSandbox({ log: silentLogger(), env: process.env });
if (warm === 'warm') {
  const first = await sandbox.run({ ...plan, argv: ['python3', '-c', 'pass'] });
  if (first.exitCode !== 0) throw new Error(`the first run failed: ${first.stderr.toString()}`);
  await sleep(1_500);
}
void sandbox.run(plan, { ready: new Promise(() => undefined) });
await sleep(1_000);
process.stdout.write('held\n');
await new Promise(() => undefined);
