import { parseArgs } from 'node:util';
import { pruneRuns } from '../runner/prune-runs.js';
import { HELP } from './help.js';
import type { CliIo, ExitCode } from './io.js';
import { RUNS_OPTIONS } from './command-options.js';
import { parseOptions } from './option-table.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/** `skills-mcp runs prune`: removes call folders older than the retention (or `--older-than DAYS`). */
export function runRuns(
  args: string[],
  io: CliIo,
  opts: { runsDir: string; retentionDays: number; now?: () => number },
): ExitCode {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h') {
    io.out(`${HELP.runs}\n`);
    return 0;
  }
  if (sub !== 'prune') {
    io.err(
      `skills-mcp runs: ${sub === undefined ? 'a command is required' : `unknown command "${sub}"`}\n\n${HELP.runs}\n`,
    );
    return 2;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    options: parseOptions(RUNS_OPTIONS),
    allowPositionals: true,
    strict: true,
  });
  if (values.help === true) {
    io.out(`${HELP.runs}\n`);
    return 0;
  }
  const days = values['older-than'] === undefined ? opts.retentionDays : Number(values['older-than']);
  if (positionals.length > 0 || !Number.isSafeInteger(days) || days < 0) {
    io.err(`skills-mcp runs: --older-than takes a whole number of days\n\n${HELP.runs}\n`);
    return 2;
  }
  const now = (opts.now ?? Date.now)();
  const removed = pruneRuns(opts.runsDir, now - days * DAY_MS, { dryRun: values['dry-run'] === true });
  const verb = values['dry-run'] === true ? 'would remove' : 'removed';
  io.out(
    `${verb} ${removed.length} call folder${removed.length === 1 ? '' : 's'} older than ${days} days from ${opts.runsDir}\n`,
  );
  return 0;
}
