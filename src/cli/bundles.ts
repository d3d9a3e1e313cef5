import { parseArgs } from 'node:util';
import { referencedBundles } from '../audit/referenced-bundles.js';
import type { SqliteDriverChoice } from '../audit/sqlite/sqlite-db.js';
import { pruneBundles } from '../skills/prune-bundles.js';
import { HELP } from './help.js';
import type { CliIo, ExitCode } from './io.js';
import { BUNDLES_OPTIONS } from './command-options.js';
import { parseOptions } from './option-table.js';

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * `skills-mcp bundles prune`: removes the verified skill copies not used for the retention (or `--unused-for
 * DAYS`), except those a run holds or a live session refers to.
 */
export async function runBundles(
  args: string[],
  io: CliIo,
  opts: {
    bundlesDir: string;
    auditPath: string;
    sqliteDriver?: SqliteDriverChoice;
    retentionDays: number;
    now?: () => number;
  },
): Promise<ExitCode> {
  const [sub, ...rest] = args;
  if (sub === '--help' || sub === '-h') {
    io.out(`${HELP.bundles}\n`);
    return 0;
  }
  if (sub !== 'prune') {
    io.err(
      `skills-mcp bundles: ${sub === undefined ? 'a command is required' : `unknown command "${sub}"`}\n\n${HELP.bundles}\n`,
    );
    return 2;
  }
  const { values, positionals } = parseArgs({
    args: rest,
    options: parseOptions(BUNDLES_OPTIONS),
    allowPositionals: true,
    strict: true,
  });
  if (values.help === true) {
    io.out(`${HELP.bundles}\n`);
    return 0;
  }
  const days = values['unused-for'] === undefined ? opts.retentionDays : Number(values['unused-for']);
  if (positionals.length > 0 || !Number.isSafeInteger(days) || days < 0) {
    io.err(`skills-mcp bundles: --unused-for takes a whole number of days\n\n${HELP.bundles}\n`);
    return 2;
  }
  const dryRun = values['dry-run'] === true;
  const { removed, kept } = await pruneBundles(opts.bundlesDir, {
    cutoffMs: (opts.now ?? Date.now)() - days * DAY_MS,
    referenced: () => referencedBundles(opts.auditPath, opts.sqliteDriver),
    dryRun,
  });
  const copies = (n: number) => `${n} bundle cop${n === 1 ? 'y' : 'ies'}`;
  io.out(
    `${dryRun ? 'would remove' : 'removed'} ${copies(removed.length)} not used for ${days} days from ${opts.bundlesDir}` +
      `${kept === 0 ? '' : `; kept ${copies(kept)} a run or a live session uses`}\n`,
  );
  return 0;
}
