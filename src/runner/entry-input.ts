import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { JsonSchemaObject, Skill } from '../skills/types.js';
import { inferArgparseSchema, type ArgparseArg } from './infer-argparse-schema.js';

/** How an executable skill's entry point takes its input. */
export interface EntryInput {
  schema: JsonSchemaObject;
  /** frontmatter `input_schema` → inferred from a Python argparse entry → free-form object. */
  source: 'frontmatter' | 'argparse' | 'free-form';
  /** For `argparse`: how to build argv from the input. */
  argparse?: ArgparseArg[];
}

export const FREE_FORM: JsonSchemaObject = { type: 'object', additionalProperties: true };

/** Works out an executable skill's input schema (frontmatter `input_schema`, else the entry file's argparse arguments, else free-form). Reads the entry file; never runs it. */
export function entryInputOf(skill: Skill): EntryInput {
  if (skill.inputSchema !== undefined)
    return { schema: { type: 'object', ...skill.inputSchema }, source: 'frontmatter' };
  if (skill.entryPoint?.endsWith('.py') === true) {
    let source: string | undefined;
    try {
      source = readFileSync(join(skill.dir, skill.entryPoint), 'utf8');
    } catch {
      source = undefined;
    }
    const spec = source === undefined ? undefined : inferArgparseSchema(source);
    if (spec !== undefined) return { schema: spec.schema, source: 'argparse', argparse: spec.args };
  }
  return { schema: FREE_FORM, source: 'free-form' };
}
