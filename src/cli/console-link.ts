import { dirname } from 'node:path';
import { isOwnerAlive } from '../audit/is-owner-alive.js';
import { readConsoleLinks } from '../console/console-link-file.js';
import { parseArgs } from 'node:util';
import { CONSOLE_OPTIONS } from './command-options.js';
import { HELP } from './help.js';
import { parseOptions } from './option-table.js';
import type { CliIo, ExitCode } from './io.js';

const alive = (pid: number) => isOwnerAlive({ pid, host: '' }, { pid: -1, host: '' });

/**
 * `skills-mcp console`: prints the approval console link of every server running with this state folder. The
 * person's own route to the console: the link is never sent to the client, a log or the audit log.
 */
export function runConsoleLink(args: string[], io: CliIo, opts: { auditPath: string }): ExitCode {
  // A parse error (an unknown or malformed option) is main's to report, with the command's usage.
  const parsed = parseArgs({
    args,
    options: parseOptions(CONSOLE_OPTIONS),
    allowPositionals: false,
    strict: true,
  });
  if (parsed.values.help === true) {
    io.out(`${HELP.console}\n`);
    return 0;
  }
  const stateDir = dirname(opts.auditPath);
  const links = readConsoleLinks(stateDir, alive);
  if (links.length === 0) {
    io.err(
      `skills-mcp console: no running server has an approval console for ${stateDir}\n` +
        'Start one with --approval-console (or approval.console: true), or pass the same --audit PATH it uses.\n',
    );
    return 1;
  }
  for (const l of links) io.out(`${l.url}\n`);
  io.err(
    'Open the link in your browser. Anyone who has it can approve runs: do not share it or paste it into a chat.\n',
  );
  return 0;
}
