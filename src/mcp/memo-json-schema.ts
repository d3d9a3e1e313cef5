import type { StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import { deepFreeze } from './deep-freeze.js';

type Converter = StandardSchemaWithJSON['~standard']['jsonSchema'];
type Options = Parameters<Converter['input']>[0];

const memos = new WeakMap<object, StandardSchemaWithJSON>();
/** MCP's default dialect for a schema that names none: said in every tool of every listing, it is bytes for nothing. */
const DEFAULT_DIALECT = 'https://json-schema.org/draft/2020-12/schema';

const withoutDefaultDialect = (json: Record<string, unknown>): Record<string, unknown> => {
  if (json.$schema !== DEFAULT_DIALECT) return json;
  const { $schema: _dialect, ...rest } = json;
  return rest;
};

/**
 * The same schema (same validation), with its JSON Schema conversion done once per direction and target. The SDK
 * converts a tool's schemas on every server instance it builds — one per stateless HTTP request — both for
 * `tools/list` and for each `tools/call` (the output schema, and the input schema for the HTTP header checks); for
 * a skill tool's answer schema that conversion costs more than the call. The converted schema is frozen, since
 * every instance shares it, and a 2020-12 conversion leaves out `$schema` (the dialect MCP assumes when none is
 * named). The same `schema` always gets the same wrapper.
 */
export function memoJsonSchema<I, O>(schema: StandardSchemaWithJSON<I, O>): StandardSchemaWithJSON<I, O> {
  const known = memos.get(schema);
  if (known !== undefined) return known as StandardSchemaWithJSON<I, O>;
  const std = schema['~standard'];
  const converted = new Map<string, Record<string, unknown>>();
  const convert = (io: 'input' | 'output') => (options: Options) => {
    // libraryOptions would change the answer: only the plain conversion is kept.
    if (options.libraryOptions !== undefined) return std.jsonSchema[io](options);
    const key = `${io}\0${options.target}`;
    let json = converted.get(key);
    if (json === undefined)
      converted.set(key, (json = deepFreeze(withoutDefaultDialect(std.jsonSchema[io](options)))));
    return json;
  };
  const memo: StandardSchemaWithJSON<I, O> = {
    '~standard': {
      version: std.version,
      vendor: std.vendor,
      validate: (value) => std.validate(value),
      jsonSchema: { input: convert('input'), output: convert('output') },
      ...(std.types === undefined ? {} : { types: std.types }),
    },
  };
  memos.set(schema, memo);
  return memo;
}
