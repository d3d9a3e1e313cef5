// A server stand-in that hands the sandbox a run whose go never comes, for the launcher's start-byte test:
//   node hold-run.mjs <dist folder> <out folder> <canary> <seconds> [warm]
// Runs `python3 -c SCRIPT <canary> <seconds>` with a `ready` that never settles, says "held" on stdout once the
// launcher had time to read its message, then waits to be killed. With `warm`, one run in the same folder comes
// first, so the held run gets a launcher the pool made ready for it (as root, for a folder only root can reach, one
// pre-staged: it forks its waiter before the start byte).
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

const [dist, out, canary, seconds, warm] = process.argv.slice(2);
const { createSandbox } = await import(pathToFileURL(`${dist}/sandbox/index.js`).href);
const { silentLogger } = await import(pathToFileURL(`${dist}/log.js`).href);

const SCRIPT = 'import sys, time; open(sys.argv[1], "w").write("ran"); time.sleep(float(sys.argv[2]))';
const sandbox = createSandbox({ log: silentLogger(), env: process.env });
const plan = (argv) => ({
  argv,
  cwd: '/tmp',
  env: {},
  readOnlyPaths: [],
  writablePaths: [out],
  network: 'none',
  profile: 'default',
  limits: {
    wallTimeMs: 20_000,
    cpuSeconds: 10,
    memoryMiB: 512,
    pids: 128,
    tmpfsMiB: 32,
    fileSizeMiB: 32,
    maxOutputBytes: 1_048_576,
    openFiles: 128,
    allowSpawn: true,
  },
});
if (warm === 'warm') {
  const first = await sandbox.run(plan(['python3', '-c', 'pass']));
  if (first.exitCode !== 0) throw new Error(`the first run failed: ${first.stderr.toString()}`);
  await sleep(1_500);
}
void sandbox.run(plan(['python3', '-c', SCRIPT, canary, seconds]), { ready: new Promise(() => undefined) });
await sleep(1_000);
process.stdout.write('held\n');
await new Promise(() => undefined);
