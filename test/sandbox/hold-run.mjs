// A server stand-in that hands the sandbox a run whose go never comes, for the launcher's start-byte test:
//   node hold-run.mjs <dist folder> <out folder> <canary> <seconds>
// Runs `python3 -c SCRIPT <canary> <seconds>` with a `ready` that never settles, says "held" on stdout once the
// launcher had time to read its message, then waits to be killed.
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { pathToFileURL } from 'node:url';

const [dist, out, canary, seconds] = process.argv.slice(2);
const { createSandbox } = await import(pathToFileURL(`${dist}/sandbox/index.js`).href);
const { silentLogger } = await import(pathToFileURL(`${dist}/log.js`).href);

const SCRIPT = 'import sys, time; open(sys.argv[1], "w").write("ran"); time.sleep(float(sys.argv[2]))';
const sandbox = createSandbox({ log: silentLogger(), env: process.env });
void sandbox.run(
  {
    argv: ['python3', '-c', SCRIPT, canary, seconds],
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
  },
  { ready: new Promise(() => undefined) },
);
await sleep(1_000);
process.stdout.write('held\n');
await new Promise(() => undefined);
