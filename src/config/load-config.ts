import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type * as z from 'zod';
import { SkillsError } from '../errors.js';
import { ConfigSchema, type Config, type ConfigInput } from './config-schema.js';

export const DEFAULT_CONFIG_FILE = 'skills-mcp.yaml';

/** The `skills:` entry that stands for the skill folders the agent hosts already use. */
export const AUTO_SKILLS = 'auto';

export interface ConfigSources {
  /** `--config FILE`; else `./skills-mcp.yaml` in `cwd` when present. */
  file?: string;
  /** Values from SKILLS_MCP_* variables (already picked by the CLI). */
  env?: Partial<ConfigInput>;
  /** Values from flags. */
  flags?: Partial<ConfigInput>;
  cwd: string;
  /** Home folder for `~/` in paths (default: the user's). */
  home?: string;
}

export interface LoadedConfig {
  config: Config;
  /** The config file read, if any. */
  file?: string;
}

/** Turns zod issues into `path: message` lines. */
export function formatIssues(issues: readonly z.core.$ZodIssue[], prefix = ''): string[] {
  return issues.flatMap((i) => {
    const inner = i.code === 'invalid_union' ? unionBranch(i.errors) : undefined;
    if (inner !== undefined)
      return formatIssues(
        inner.map((x) => ({ ...x, path: [...i.path, ...x.path] })),
        prefix,
      );
    return [`${prefix}${i.path.length === 0 ? '(root)' : i.path.join('.')}: ${i.message}`];
  });
}

/** Of a union's failed branches, the one the value had the shape of (the others failed on its type), if one. */
function unionBranch(
  branches: readonly (readonly z.core.$ZodIssue[])[],
): readonly z.core.$ZodIssue[] | undefined {
  const shaped = branches.filter((b) => !b.every((x) => x.code === 'invalid_type' && x.path.length === 0));
  return shaped.length === 1 ? shaped[0] : undefined;
}

/** Reads and layers the configuration. Throws CONFIG_INVALID whose `details.lines` are `path: message` lines. */
export function loadConfig(src: ConfigSources): LoadedConfig {
  const explicit = src.file !== undefined;
  const file = explicit ? resolve(src.cwd, src.file!) : resolve(src.cwd, DEFAULT_CONFIG_FILE);
  let fromFile: Record<string, unknown> = {};
  const haveFile = existsSync(file);
  if (explicit && !haveFile) throw invalid([`${file}: config file not found`]);
  if (haveFile) fromFile = readConfigFile(file);
  const merged = [src.env ?? {}, src.flags ?? {}].reduce<Record<string, unknown>>(deepMerge, fromFile);
  // Parsed once per process: zod's compiled fast path for each nested object would cost more to build than it saves.
  const parsed = ConfigSchema.safeParse(merged, { jitless: true });
  if (!parsed.success) throw invalid(formatIssues(parsed.error.issues, haveFile ? `${file}: ` : ''));
  const config: Config = parsed.data;
  // Paths from the file are relative to the file; paths from env and flags to the working directory.
  const fromFileOnly = (key: PathKey) =>
    haveFile && src.flags?.[key] === undefined && src.env?.[key] === undefined;
  const abs = (key: PathKey, p: string) => {
    const home = p === '~' || p.startsWith('~/') ? join(src.home ?? homedir(), p.slice(1)) : p;
    return isAbsolute(home) ? home : resolve(fromFileOnly(key) ? dirname(file) : src.cwd, home);
  };
  // `auto` stands for the host skill folders, found by the CLI (resolveConfig) where it knows the home and project.
  config.skills = config.skills.map((p) => (p === AUTO_SKILLS ? p : abs('skills', p)));
  if (config.workspace !== undefined) config.workspace = abs('workspace', config.workspace);
  // A PostgreSQL URL names a database, not a path.
  if (config.audit !== undefined && !/^postgres(?:ql)?:\/\//i.test(config.audit))
    config.audit = abs('audit', config.audit);
  if (config.data_dir !== undefined) config.data_dir = abs('data_dir', config.data_dir);
  if (config.dependencies.dir !== undefined)
    config.dependencies.dir = abs('dependencies', config.dependencies.dir);
  if (config.sandbox.profiles_dir !== undefined)
    config.sandbox.profiles_dir = abs('sandbox', config.sandbox.profiles_dir);
  config.sandbox.read_only_paths = config.sandbox.read_only_paths.map((p) => abs('sandbox', p));
  addOverridePackages(config);
  return haveFile ? { config, file } : { config };
}

/**
 * `skill_overrides.<name>.packages` are the operator's packages for a skill, as `dependencies.skills.<name>`: both are
 * added, in that one place, so environments, `deps` and `list` read one map.
 */
function addOverridePackages(config: Config): void {
  for (const [name, o] of Object.entries(config.skill_overrides)) {
    if (o.packages === undefined) continue;
    const had = config.dependencies.skills[name] ?? {};
    const join = (a: readonly string[] | undefined, b: readonly string[] | undefined) =>
      a === undefined && b === undefined ? undefined : [...(a ?? []), ...(b ?? [])];
    const python = join(had.python, o.packages.python);
    const node = join(had.node, o.packages.node);
    config.dependencies.skills[name] = {
      ...(python === undefined ? {} : { python }),
      ...(node === undefined ? {} : { node }),
    };
  }
}

type PathKey = 'skills' | 'workspace' | 'audit' | 'data_dir' | 'sandbox' | 'dependencies';

const isPlainObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** Layers `over` onto `base`: nested settings (http, approval, sandbox) merge key by key; lists are replaced. */
function deepMerge(base: Record<string, unknown>, over: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    out[k] = isPlainObject(v) && isPlainObject(out[k]) ? deepMerge(out[k], v) : v;
  }
  return out;
}

function readConfigFile(file: string): Record<string, unknown> {
  // Loaded only when there is a config file: most runs have none, and start-up time matters.
  const yaml = createRequire(import.meta.url)('yaml') as typeof Yaml;
  let data: unknown;
  try {
    data = yaml.parse(readFileSync(file, 'utf8'));
  } catch (e) {
    const line = e instanceof yaml.YAMLParseError ? e.linePos?.[0]?.line : undefined;
    const msg = e instanceof Error ? (e.message.split('\n')[0] ?? e.message) : String(e);
    throw invalid([`${file}${line === undefined ? '' : `:${line}`}: invalid YAML: ${msg}`]);
  }
  if (data === null || data === undefined) return {};
  if (typeof data !== 'object' || Array.isArray(data))
    throw invalid([`${file}: (root): expected a mapping of settings`]);
  return data as Record<string, unknown>;
}

function invalid(lines: string[]): SkillsError {
  return new SkillsError('CONFIG_INVALID', lines.join('\n'), {
    details: { lines },
    hint: 'Fix the settings above; `skills-mcp --help` lists every option.',
  });
}
