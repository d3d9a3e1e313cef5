import { SkillsError } from '../errors.js';

/** Most argv entries a call may pass after the script. */
export const MAX_ARGS = 10_000;
/** Largest single argv entry in bytes (Linux refuses longer ones at exec: MAX_ARG_STRLEN, 128 KiB with its NUL). */
export const MAX_ARG_BYTES = 128 * 1024 - 1;
/** Largest argv in all, in bytes (Linux allows about 2 MiB for argv and the environment together). */
export const MAX_ARGV_BYTES = 1024 * 1024;
/** Most times an argparse `count` flag may be repeated (`-vvv…`). */
export const MAX_COUNT = 100;

const tooLarge = (message: string) =>
  new SkillsError('INPUT_TOO_LARGE', message, {
    hint: 'Nothing was run or asked. Pass large data in the JSON input or a file the skill reads, not as arguments.',
  });

/**
 * Collects argv entries while checking each against the limits, so an expansion (a repeat count, a long array)
 * is refused at the first entry over a limit, before it is built in full.
 */
export function createArgvBuilder(): {
  push: (what: string, values: readonly string[]) => void;
  argv: string[];
} {
  const argv: string[] = [];
  let bytes = 0;
  const push = (what: string, values: readonly string[]) => {
    if (argv.length + values.length > MAX_ARGS) {
      throw tooLarge(`"${what}" makes more than ${MAX_ARGS} arguments; a call may pass at most ${MAX_ARGS}`);
    }
    for (const v of values) {
      if (v.length > MAX_ARG_BYTES || Buffer.byteLength(v) > MAX_ARG_BYTES) {
        throw tooLarge(
          `an argument of "${what}" is over ${MAX_ARG_BYTES} bytes, the most one argument may be`,
        );
      }
      if (v.includes('\0')) {
        throw new SkillsError('INPUT_INVALID', `an argument of "${what}" holds a NUL character`, {
          hint: 'Arguments are C strings: pass binary data in the JSON input instead.',
        });
      }
      bytes += Buffer.byteLength(v) + 1;
      if (bytes > MAX_ARGV_BYTES) {
        throw tooLarge(
          `the arguments reach more than ${MAX_ARGV_BYTES} bytes at "${what}"; at most ${MAX_ARGV_BYTES} in all`,
        );
      }
      argv.push(v);
    }
  };
  return { push, argv };
}

/** Checks a repeat count (argparse `count`) before anything is repeated. */
export function checkCount(what: string, n: unknown): number {
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 0) {
    throw new SkillsError('INPUT_INVALID', `"${what}" must be a whole number of at least 0`, {
      hint: 'It counts how often the flag is given, as in -vvv for 3.',
    });
  }
  if (n > MAX_COUNT)
    throw tooLarge(`"${what}" is ${n}; a count flag may be repeated at most ${MAX_COUNT} times`);
  return n;
}

/** The model's own argv for `run_skill_script`, checked against the same limits. */
export function checkedArgs(args: readonly string[]): string[] {
  if (args.length > MAX_ARGS) {
    throw tooLarge(`"args" has ${args.length} items; a call may pass at most ${MAX_ARGS} arguments`);
  }
  const b = createArgvBuilder();
  b.push('args', args);
  return b.argv;
}
