import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildArgparseArgv } from '../../src/runner/build-argv.js';
import { inferArgparseSchema } from '../../src/runner/infer-argparse-schema.js';
import { repoRoot } from '../helpers/temp-dir.js';

const fixture = readFileSync(
  join(repoRoot, 'test/fixtures/roots/main/argparse-entry/scripts/main.py'),
  'utf8',
);

describe('inferArgparseSchema', () => {
  it('infers positionals, typed options, flags, choices and nargs from the fixture entry point', () => {
    const spec = inferArgparseSchema(fixture)!;
    expect(spec.schema).toEqual({
      type: 'object',
      properties: {
        path: { type: 'string', description: 'Text file to read' },
        count: { type: 'integer', default: 3, description: 'How many of the most common words to return' },
        verbose: { type: 'boolean', default: false, description: 'Also return the number of lines' },
        mode: { type: 'string', enum: ['a', 'b'], description: 'a: case-sensitive, b: case-insensitive' },
        tags: {
          type: 'array',
          items: { type: 'string' },
          minItems: 1,
          description: 'Labels copied into the result',
        },
      },
      required: ['path'],
      additionalProperties: false,
    });
  });

  it('reads dest=, required=True, float types, store_false and optional positionals', () => {
    const src = `import argparse
p = argparse.ArgumentParser()
p.add_argument('-o', '--out-file', dest='target', required=True)
p.add_argument('--ratio', type=float, help='ratio, default %(default)s', default=0.5)
p.add_argument('--no-color', action='store_false')
p.add_argument('extra', nargs='?')
p.add_argument("--msg", help="has, a comma (and parens)")`;
    const { schema } = inferArgparseSchema(src)!;
    expect(schema.properties).toMatchObject({
      target: { type: 'string' },
      ratio: { type: 'number', default: 0.5, description: 'ratio, default 0.5' },
      no_color: { type: 'boolean', default: true },
      extra: { type: 'string' },
      msg: { description: 'has, a comma (and parens)' },
    });
    expect(schema.required).toEqual(['target']);
  });

  it('returns undefined for a script without argparse', () => {
    expect(inferArgparseSchema('import sys\nprint(sys.argv)')).toBeUndefined();
  });
});

describe('buildArgparseArgv', () => {
  const { args } = inferArgparseSchema(fixture)!;

  it('builds options then positionals after --, a bare flag for true, arrays as values', () => {
    expect(
      buildArgparseArgv(args, { path: 'assets/sample.txt', count: 2, verbose: true, tags: ['x', 'y'] }),
    ).toEqual(['--count=2', '--verbose', '--tags', 'x', 'y', '--', 'assets/sample.txt']);
  });

  it('passes hostile values verbatim as single argv entries', () => {
    const argv = buildArgparseArgv(args, { path: '--bind / /', mode: '$(touch x); rm -rf ~\n' });
    expect(argv).toEqual(['--mode=$(touch x); rm -rf ~\n', '--', '--bind / /']);
  });

  it('omits a false store_true flag and absent options', () => {
    expect(buildArgparseArgv(args, { path: 'p', verbose: false })).toEqual(['--', 'p']);
  });
});
