import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/run-cli.js';

/** The `--name` options a help text lists, `--help` aside. */
const listed = (help: string) => [...new Set([...help.matchAll(/--([a-z][a-z-]*)/g)].map((m) => m[1]!))];

/** Whether the command's parser takes `--name` (with a value where it needs one), asked with --help so nothing runs. */
function accepts(command: string, name: string, needsValue: boolean): boolean {
  const r = runCli([command, `--${name}`, ...(needsValue ? ['x'] : []), '--help']);
  return !r.stderr.includes('Unknown option');
}

describe('CLI help is made from the option tables the parser reads', () => {
  it.each(['serve', 'run'])('every option %s --help lists is accepted by its parser', (command) => {
    const help = runCli([command, '--help']);
    expect(help.code).toBe(0);
    const text = help.stdout + help.stderr;
    for (const name of listed(text).filter((n) => n !== 'help')) {
      const needsValue = new RegExp(`--${name} [A-Z{@]`).test(text);
      expect(accepts(command, name, needsValue), `${command} --${name}`).toBe(true);
    }
  });

  it('run --help lists --workspace and --log-level, which its parser accepts', () => {
    const help = runCli(['run', '--help']);
    expect(help.stdout).toMatch(/--workspace DIR/);
    expect(help.stdout).toMatch(/--log-level LEVEL/);
    expect(help.stdout).toMatch(/--config FILE/);
    expect(accepts('run', 'workspace', true)).toBe(true);
    expect(accepts('run', 'log-level', true)).toBe(true);
  });

  it('every option of the serve and run tables appears in that command’s help', async () => {
    const { RUN_OPTIONS, SERVE_OPTIONS } = await import('../../src/cli/command-options.js');
    for (const [command, table] of [
      ['serve', SERVE_OPTIONS],
      ['run', RUN_OPTIONS],
    ] as const) {
      const help = runCli([command, '--help']);
      const text = help.stdout + help.stderr;
      for (const name of Object.keys(table).filter((n) => n !== 'help'))
        expect(listed(text), command).toContain(name);
    }
  });
});
