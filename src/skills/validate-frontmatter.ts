import type * as z from 'zod';
import { FrontmatterSchema, KNOWN_FIELDS, SKILL_NAME_PATTERN } from './frontmatter-schema.js';
import { lineOfKey } from './parse-skill-file.js';
import type { Finding, JsonSchemaObject, SkillRequests } from './types.js';

export interface ValidatedFrontmatter {
  name: string;
  description: string;
  entryPoint?: string;
  inputSchema?: JsonSchemaObject;
  allowedTools: string[];
  requests: SkillRequests;
}

export interface Validation {
  /** Undefined when the skill must be skipped (`fatal` says why). */
  fields?: ValidatedFrontmatter;
  fatal?: Finding;
  /** Soft violations: the skill loads, the server warns. */
  warnings: Finding[];
  /** Everything lint reports (includes `warnings`, at lint severity). */
  lint: Finding[];
}

const shape = FrontmatterSchema.shape;
type Shape = typeof shape;

const STRING_FIELDS: ReadonlySet<string> = new Set([
  'license',
  'compatibility',
  'allowed-tools',
  'entry_point',
]);

/**
 * True for the values most skills have, which the schema certainly accepts: a string where any string will do (a
 * too-long compatibility is reported before), a map of strings for `metadata`. Anything else goes to zod, which
 * decides; this only spares thousands of skills its parse.
 */
function plainlyValid(key: string, value: unknown): boolean {
  if (STRING_FIELDS.has(key)) return typeof value === 'string';
  if (key !== 'metadata' || typeof value !== 'object' || value === null) return false;
  if (Object.getPrototypeOf(value) !== Object.prototype) return false;
  for (const v of Object.values(value)) if (typeof v !== 'string') return false;
  return true;
}

/** A field's value when present and valid, else undefined (an absent field is not handed to zod at all). */
const dataOf = <K extends keyof Shape>(fm: Record<string, unknown>, key: K): z.infer<Shape[K]> | undefined =>
  fm[key] === undefined ? undefined : (shape[key].safeParse(fm[key]).data as z.infer<Shape[K]> | undefined);

/**
 * Checks frontmatter against the spec. Lenient: only a missing name or description is fatal; every other violation
 * is a load warning (and a lint error or warning). Never throws.
 */
export function validateFrontmatter(
  fm: Record<string, unknown>,
  raw: string,
  folder: string,
  path: string,
): Validation {
  const warnings: Finding[] = [];
  const lint: Finding[] = [];
  const at = (key: string) => {
    const line = lineOfKey(raw, key);
    return line === undefined ? {} : { line };
  };
  const report = (
    key: string,
    rule: string,
    lintSeverity: 'error' | 'warning',
    message: string,
    load = true,
  ) => {
    const f: Finding = { path, ...at(key), rule, severity: lintSeverity, message };
    lint.push(f);
    if (load) warnings.push({ ...f, severity: 'warning' });
  };

  const name = typeof fm.name === 'string' || typeof fm.name === 'number' ? String(fm.name).trim() : '';
  if (name === '') {
    const fatal: Finding = {
      path,
      line: 1,
      rule: 'name-missing',
      severity: 'error',
      message: 'frontmatter has no `name`: add `name: ' + folder + '`',
    };
    return { fatal, warnings, lint: [fatal] };
  }
  const description = typeof fm.description === 'string' ? fm.description.trim() : '';
  if (description === '') {
    const fatal: Finding = {
      path,
      ...at('description'),
      line: lineOfKey(raw, 'description') ?? 1,
      rule: 'description-missing',
      severity: 'error',
      message: 'frontmatter has no non-empty `description`: say what the skill does and when to use it',
    };
    return { fatal, warnings, lint: [fatal] };
  }

  if (/[^\x21-\x7e]/.test(name)) {
    // Letters from other scripts (Cyrillic "р" for Latin "p"), invisible or spacing characters make a name that
    // looks like another skill's: refused, as the spec allows only a-z, 0-9 and hyphens.
    const fatal: Finding = {
      path,
      line: lineOfKey(raw, 'name') ?? 1,
      rule: 'name-not-ascii',
      severity: 'error',
      message: `name ${JSON.stringify(name).replace(/[^\x20-\x7e]/g, (ch) => `\\u{${ch.codePointAt(0)!.toString(16)}}`)} has characters outside a-z, 0-9 and hyphens that can look like other letters: rename it`,
    };
    return { fatal, warnings, lint: [fatal] };
  }
  if (name.length > 64 || !SKILL_NAME_PATTERN.test(name)) {
    report(
      'name',
      'name-format',
      'error',
      `name "${name}" must be 1–64 chars of a-z, 0-9 and single hyphens, not starting or ending with a hyphen`,
    );
  }
  if (name !== folder)
    report('name', 'name-folder-mismatch', 'warning', `name "${name}" differs from its folder "${folder}"`);
  if (description.length > 1024) {
    report(
      'description',
      'description-too-long',
      'error',
      `description is ${description.length} chars; the limit is 1024`,
    );
  }
  const check = (key: keyof typeof shape, rule: string, message: string) => {
    const value = fm[key];
    if (value === undefined || plainlyValid(key, value)) return;
    if (!shape[key].safeParse(value).success) report(key, rule, 'error', message);
  };
  if (typeof fm.compatibility === 'string' && fm.compatibility.length > 500) {
    report(
      'compatibility',
      'compatibility-too-long',
      'error',
      `compatibility is ${fm.compatibility.length} chars; the limit is 500`,
    );
  } else check('compatibility', 'compatibility-format', 'compatibility must be a string');
  check('license', 'license-format', 'license must be a string');
  check(
    'metadata',
    'metadata-format',
    'metadata must be a map of string keys to string values (quote numbers)',
  );
  check(
    'allowed-tools',
    'allowed-tools-format',
    'allowed-tools must be a space-separated string or a list of strings',
  );
  check(
    'entry_point',
    'entry-point-format',
    'entry_point must be a path string relative to the skill folder',
  );
  check('input_schema', 'input-schema-format', 'input_schema must be a JSON Schema object');
  check('timeout', 'timeout-format', 'timeout must be seconds (a number) or a string like "30s" or "500ms"');
  check('network', 'network-format', 'network must be true, false, "none" or "full"');
  check('sandbox', 'sandbox-format', 'sandbox must be a profile name (a-z, 0-9, hyphens)');
  check('workspace', 'workspace-format', 'workspace must be none, read or write');
  check('env', 'env-format', 'env must be a list of environment variable names');
  for (const key of Object.keys(fm)) {
    if (!KNOWN_FIELDS.has(key))
      report(key, 'unknown-field', 'warning', `unknown field "${key}" is kept and ignored`, false);
  }

  const tools = dataOf(fm, 'allowed-tools');
  const allowedTools =
    tools === undefined ? [] : typeof tools === 'string' ? tools.split(/\s+/).filter(Boolean) : tools;
  const schema = dataOf(fm, 'input_schema');
  let inputSchema: JsonSchemaObject | undefined;
  if (schema !== undefined) {
    if (schema.type === undefined || schema.type === 'object') inputSchema = schema;
    else
      report(
        'input_schema',
        'input-schema-format',
        'error',
        'input_schema must describe an object (type: object)',
      );
  }
  const entryPoint = dataOf(fm, 'entry_point');
  const fields: ValidatedFrontmatter = {
    name,
    description,
    allowedTools,
    requests: requestsOf(fm),
    ...(entryPoint === undefined ? {} : { entryPoint }),
    ...(inputSchema === undefined ? {} : { inputSchema }),
  };
  return { fields, warnings, lint };
}

function requestsOf(fm: Record<string, unknown>): SkillRequests {
  const network = dataOf(fm, 'network');
  const sandbox = dataOf(fm, 'sandbox');
  const timeout = dataOf(fm, 'timeout');
  const env = dataOf(fm, 'env');
  const workspace = dataOf(fm, 'workspace');
  const timeoutMs =
    typeof timeout === 'number'
      ? Math.round(timeout * 1000)
      : typeof timeout === 'string'
        ? parseInt(timeout, 10) * (timeout.endsWith('ms') ? 1 : 1000)
        : undefined;
  return {
    network: network === true || network === 'full',
    workspace: workspace ?? 'read',
    env: env === undefined ? [] : typeof env === 'string' ? env.split(/[\s,]+/).filter(Boolean) : env,
    ...(typeof sandbox === 'string' ? { sandboxProfile: sandbox } : {}),
    ...(timeoutMs === undefined ? {} : { timeoutMs }),
  };
}
