import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.js';
import { runCli, type CliRun } from '../helpers/run-cli.js';

/**
 * The CLI's `main` in this process, with the environment `runCli` gives the binary: what the parser says of an
 * argv needs no process (the per-command checks below still spawn the binary once each).
 */
async function runMain(args: string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const stdin = new PassThrough();
  stdin.end();
  const code = await main(
    args,
    {
      out: (t) => void (stdout += t),
      err: (t) => void (stderr += t),
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: process.env.HOME ?? '/tmp' },
      cwd: process.cwd(),
      stdinIsTTY: false,
    },
    stdin,
  );
  return { code, stdout, stderr };
}

/** The `--name` options a help text lists, `--help` aside. */
const listed = (help: string) => [...new Set([...help.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]!))];

/** Whether the command's parser takes `--name` (with a value where it needs one), asked with --help so nothing runs. */
async function accepts(command: readonly string[], name: string, needsValue: boolean): Promise<boolean> {
  const r = await runMain([...command, `--${name}`, ...(needsValue ? ['x'] : []), '--help']);
  return !r.stderr.includes('Unknown option');
}

/** Every command with options, as typed up to where its options start. */
const COMMANDS: readonly (readonly string[])[] = [
  ['serve'],
  ['run'],
  ['runs', 'prune'],
  ['bundles', 'prune'],
  ['sources', 'list'],
  ['sources', 'update'],
  ['deps', 'list'],
  ['config', 'claude-desktop'],
  ['lint'],
  ['doctor'],
  ['console'],
  ['list'],
  ['audit', 'verify'],
  ['audit', 'archive'],
  ['audit', 'reanchor'],
  ['audit', 'list'],
  ['audit', 'show'],
  ['audit', 'export'],
];

describe('CLI help is made from the option tables the parser reads', () => {
  it.each(COMMANDS.map((c) => [c.join(' '), c] as const))(
    'every option %s --help lists is accepted by its parser',
    async (_, command) => {
      // The built binary prints this help; the options it lists are then put to the parser in this process.
      const help = runCli([...command, '--help']);
      expect(help.code).toBe(0);
      const text = help.stdout + help.stderr;
      for (const name of listed(text).filter((n) => n !== 'help')) {
        const needsValue = new RegExp(`--${name} [A-Z{@]`).test(text);
        expect(await accepts(command, name, needsValue), `${command.join(' ')} --${name}`).toBe(true);
      }
    },
  );

  it('a parser refuses an option its help does not list', async () => {
    for (const command of COMMANDS) {
      const r = await runMain([...command, '--no-such-option']);
      expect(r.code, command.join(' ')).toBe(2);
    }
  });

  it('an audit subcommand refuses another subcommand’s option, --help or not', async () => {
    const r = await runMain(['audit', 'list', '--out', 'x', '--help']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/list does not take --out/);
    expect((await runMain(['audit', 'verify', '--jsonl'])).code).toBe(2);
  });

  it('run --help lists --workspace and --log-level, which its parser accepts', async () => {
    const help = await runMain(['run', '--help']);
    expect(help.stdout).toMatch(/--workspace DIR/);
    expect(help.stdout).toMatch(/--log-level LEVEL/);
    expect(help.stdout).toMatch(/--config FILE/);
    expect(await accepts(['run'], 'workspace', true)).toBe(true);
    expect(await accepts(['run'], 'log-level', true)).toBe(true);
  });

  it('every option of each command’s table appears in that command’s help', async () => {
    const tables = await import('../../src/cli/command-options.js');
    const audit = await import('../../src/cli/audit-options.js');
    for (const [command, table] of [
      [['serve'], tables.SERVE_OPTIONS],
      [['run'], tables.RUN_OPTIONS],
      [['runs', 'prune'], tables.RUNS_OPTIONS],
      [['bundles', 'prune'], tables.BUNDLES_OPTIONS],
      [['deps'], tables.DEPS_OPTIONS],
      [['config'], tables.CONFIG_OPTIONS],
      [['lint'], tables.LINT_OPTIONS],
      [['doctor'], tables.DOCTOR_OPTIONS],
      [['console'], tables.CONSOLE_OPTIONS],
      [['list'], tables.LIST_OPTIONS],
      ...Object.entries(audit.AUDIT_OPTIONS).map(([sub, t]) => [['audit', sub], t] as const),
    ] as const) {
      const help = await runMain([...command, '--help']);
      const text = help.stdout + help.stderr;
      for (const name of Object.keys(table).filter((n) => n !== 'help'))
        expect(listed(text), command.join(' ')).toContain(name);
    }
  });
});
