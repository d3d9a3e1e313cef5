import { describe, expect, it } from 'vitest';
import { isSkillsError } from '../../src/errors.js';
import {
  MAX_ARG_BYTES,
  MAX_ARGS,
  MAX_ARGV_BYTES,
  MAX_COUNT,
  checkedArgs,
} from '../../src/runner/argv-limits.js';
import { buildArgparseArgv } from '../../src/runner/build-argv.js';
import type { ArgparseArg } from '../../src/runner/infer-argparse-schema.js';

const ARGS: ArgparseArg[] = [
  { dest: 'path' },
  { dest: 'verbose', flag: '-v', action: 'count' },
  { dest: 'tag', flag: '--tag', action: 'append' },
  { dest: 'files', flag: '--files', nargs: '+' },
  { dest: 'opt', flag: '--opt' },
];

const codeOf = (f: () => unknown): string | undefined => {
  try {
    f();
    return undefined;
  } catch (e) {
    if (isSkillsError(e)) return `${e.code}: ${e.message}`;
    throw e;
  }
};

describe('argv limits', () => {
  it('repeats a count flag up to the limit', () => {
    expect(buildArgparseArgv(ARGS, { verbose: 3 })).toEqual(['-v', '-v', '-v']);
    expect(buildArgparseArgv(ARGS, { verbose: MAX_COUNT })).toHaveLength(MAX_COUNT);
  });

  it.each<[string, Record<string, unknown>, RegExp]>([
    [
      'a count of a billion',
      { verbose: 1e9 },
      /^INPUT_TOO_LARGE: "verbose" is 1000000000; .* at most 100 times/,
    ],
    ['a fractional count', { verbose: 2.5 }, /^INPUT_INVALID: "verbose" must be a whole number/],
    ['a negative count', { verbose: -1 }, /^INPUT_INVALID/],
    [
      'too many appended items',
      { tag: Array.from({ length: MAX_ARGS }, () => 'x') },
      /^INPUT_TOO_LARGE: "tag" makes more than/,
    ],
    [
      'a list past the argument count',
      { files: Array.from({ length: MAX_ARGS + 1 }, () => '') },
      /^INPUT_TOO_LARGE: "files" has 10001 items/,
    ],
    [
      'one argument past 128 KiB',
      { opt: 'x'.repeat(MAX_ARG_BYTES) },
      /^INPUT_TOO_LARGE: an argument of "opt" is over/,
    ],
    [
      'arguments past 1 MiB in all',
      { files: Array.from({ length: 9 }, () => 'x'.repeat(120_000)) },
      /^INPUT_TOO_LARGE: the arguments reach more than/,
    ],
    ['a NUL in a value', { path: 'a\0b' }, /^INPUT_INVALID: an argument of "path" holds a NUL/],
  ])('refuses %s with an error naming the limit', (_what, input, expected) => {
    expect(codeOf(() => buildArgparseArgv(ARGS, input))).toMatch(expected);
  });

  it('checks the extra args of run_skill_script the same way', () => {
    expect(checkedArgs(['a', '--b'])).toEqual(['a', '--b']);
    expect(codeOf(() => checkedArgs(Array.from({ length: MAX_ARGS + 1 }, () => '')))).toMatch(
      /^INPUT_TOO_LARGE/,
    );
    expect(
      codeOf(() => checkedArgs(Array.from({ length: 9 }, () => 'x'.repeat(MAX_ARGV_BYTES / 8)))),
    ).toMatch(/^INPUT_TOO_LARGE/);
  });
});
