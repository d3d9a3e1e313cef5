import { fromJsonSchema } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import * as z from 'zod';
import { memoJsonSchema } from '../../src/mcp/memo-json-schema.js';
import { SkillViewSchema } from '../../src/mcp/skill-view.js';

const target = { target: 'draft-2020-12' } as const;

describe('a schema whose JSON Schema is converted once', () => {
  it('gives the JSON Schema the schema itself gives less the default dialect, the same object each time, frozen', () => {
    const memo = memoJsonSchema(SkillViewSchema);
    const std = SkillViewSchema['~standard'];
    for (const io of ['input', 'output'] as const) {
      const first = memo['~standard'].jsonSchema[io](target);
      const { $schema: dialect, ...rest } = std.jsonSchema[io](target);
      expect(dialect).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(first).toEqual(rest);
      expect(first).not.toHaveProperty('$schema');
      expect(memo['~standard'].jsonSchema[io](target)).toBe(first);
      expect(Object.isFrozen(first)).toBe(true);
      expect(Object.isFrozen(first.properties)).toBe(true);
    }
    const draft7 = memo['~standard'].jsonSchema.output({ target: 'draft-07' });
    expect(draft7).toEqual(std.jsonSchema.output({ target: 'draft-07' }));
    expect(draft7).not.toBe(memo['~standard'].jsonSchema.output(target));
  });

  it('is one wrapper per schema, so server instances built per request share the conversion', () => {
    const input = z.object({ skill: z.string() });
    expect(memoJsonSchema(input)).toBe(memoJsonSchema(input));
    expect(memoJsonSchema(z.object({ skill: z.string() }))).not.toBe(memoJsonSchema(input));
  });

  it('validates exactly like the schema it wraps', async () => {
    const input = z.object({ skill: z.string().min(1), path: z.string().max(5) });
    const memo = memoJsonSchema(input);
    for (const value of [
      { skill: 'a', path: 'b' },
      { skill: '', path: 'b' },
      { skill: 'a', path: 'toolong' },
      7,
    ]) {
      const mine = await memo['~standard'].validate(value);
      const theirs = await input['~standard'].validate(value);
      expect(mine).toEqual(theirs);
    }
    const json = memoJsonSchema(
      fromJsonSchema<{ n: number }>({ type: 'object', properties: { n: { type: 'number' } } }),
    );
    expect(await json['~standard'].validate({ n: 1 })).toEqual({ value: { n: 1 } });
    expect(await json['~standard'].validate({ n: 'x' })).toHaveProperty('issues');
  });
});
