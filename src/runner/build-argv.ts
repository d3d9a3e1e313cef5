import { SkillsError } from '../errors.js';
import { checkCount, createArgvBuilder, MAX_ARGS } from './argv-limits.js';
import type { ArgparseArg } from './infer-argparse-schema.js';

const scalar = (dest: string, v: unknown): string => {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new SkillsError('INPUT_INVALID', `"${dest}" must be a string, number or boolean`, {
    hint: 'Check the tool input schema.',
  });
};

/** The items of an array value, refused before anything is built when there are more than argv could hold. */
const itemsOf = (dest: string, v: readonly unknown[]): readonly unknown[] => {
  if (v.length > MAX_ARGS) {
    throw new SkillsError(
      'INPUT_TOO_LARGE',
      `"${dest}" has ${v.length} items; a call may pass at most ${MAX_ARGS} arguments`,
      {
        hint: 'Nothing was run or asked. Pass long lists in the JSON input or a file the skill reads, not as arguments.',
      },
    );
  }
  return v;
};

/**
 * argv for an argparse entry point from a validated input: positionals in declaration order, then `--long value`,
 * a bare flag for `store_true` when true (`store_false` when false), arrays as repeated values.
 * Values are separate argv entries — never a shell string. A value starting with "-" after a positional marker
 * is passed verbatim; argparse itself decides. Every expansion is bounded (see `argv-limits.ts`) as it is built.
 */
export function buildArgparseArgv(args: readonly ArgparseArg[], input: Record<string, unknown>): string[] {
  const positional = createArgvBuilder();
  const options = createArgvBuilder();
  for (const a of args) {
    const v = input[a.dest];
    if (v === undefined || v === null) continue;
    if (a.flag === undefined) {
      if (Array.isArray(v)) for (const x of itemsOf(a.dest, v)) positional.push(a.dest, [scalar(a.dest, x)]);
      else positional.push(a.dest, [scalar(a.dest, v)]);
      continue;
    }
    if (a.action === 'store_true' || a.action === 'store_false') {
      if (v === (a.action === 'store_true')) options.push(a.dest, [a.flag]);
      continue;
    }
    if (a.action === 'count') {
      const n = checkCount(a.dest, v);
      for (let i = 0; i < n; i++) options.push(a.dest, [a.flag]);
      continue;
    }
    if (Array.isArray(v)) {
      const items = itemsOf(a.dest, v);
      if (a.action === 'append') for (const x of items) options.push(a.dest, [a.flag, scalar(a.dest, x)]);
      else if (items.length > 0) {
        options.push(a.dest, [a.flag]);
        for (const x of items) options.push(a.dest, [scalar(a.dest, x)]);
      }
      continue;
    }
    options.push(a.dest, [`${a.flag}=${scalar(a.dest, v)}`]);
  }
  const argv = positional.argv.length > 0 ? [...options.argv, '--', ...positional.argv] : options.argv;
  // The two halves were bounded apart; together they must fit too.
  createArgvBuilder().push('the arguments', argv);
  return argv;
}
