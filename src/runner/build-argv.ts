import { SkillsError } from '../errors.js';
import type { ArgparseArg } from './infer-argparse-schema.js';

const scalar = (dest: string, v: unknown): string => {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  throw new SkillsError('INPUT_INVALID', `"${dest}" must be a string, number or boolean`, {
    hint: 'Check the tool input schema.',
  });
};

/**
 * argv for an argparse entry point from a validated input: positionals in declaration order, then `--long value`,
 * a bare flag for `store_true` when true (`store_false` when false), arrays as repeated values.
 * Values are separate argv entries — never a shell string. A value starting with "-" after a positional marker
 * is passed verbatim; argparse itself decides.
 */
export function buildArgparseArgv(args: readonly ArgparseArg[], input: Record<string, unknown>): string[] {
  const positional: string[] = [];
  const options: string[] = [];
  for (const a of args) {
    const v = input[a.dest];
    if (v === undefined || v === null) continue;
    if (a.flag === undefined) {
      positional.push(...(Array.isArray(v) ? v.map((x) => scalar(a.dest, x)) : [scalar(a.dest, v)]));
      continue;
    }
    if (a.action === 'store_true' || a.action === 'store_false') {
      if (v === (a.action === 'store_true')) options.push(a.flag);
      continue;
    }
    if (a.action === 'count') {
      for (let i = 0; i < Number(v); i++) options.push(a.flag);
      continue;
    }
    if (Array.isArray(v)) {
      if (a.action === 'append') for (const x of v) options.push(a.flag, scalar(a.dest, x));
      else if (v.length > 0) options.push(a.flag, ...v.map((x) => scalar(a.dest, x)));
      continue;
    }
    options.push(`${a.flag}=${scalar(a.dest, v)}`);
  }
  return positional.length > 0 ? [...options, '--', ...positional] : options;
}
