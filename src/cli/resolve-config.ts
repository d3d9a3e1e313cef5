import { homedir } from 'node:os';
import { dirname, isAbsolute, join } from 'node:path';
import type { Config, ConfigInput } from '../config/config-schema.js';
import { AUTO_SKILLS, loadConfig, type LoadedConfig } from '../config/load-config.js';
import { pythonProblem } from '../envs/python-problem.js';
import { isSkillsError } from '../errors.js';
import { escapeForDisplay } from '../escape-for-display.js';
import { readOnlyPathLines } from '../sandbox/load-profile.js';
import { archiveRoots } from '../skills/archive-roots.js';
import { gitSourceRoots } from '../skills/git-source-roots.js';
import { findHostSkillFolders, type HostFolderScan } from '../skills/host-skill-folders.js';
import { configFromEnv } from './env-config.js';
import { resolveLocalBase } from './audit-path.js';
import { formatFinding } from './format-finding.js';
import type { CliIo } from './io.js';

export interface ResolvedConfig extends LoadedConfig {
  /** With `skills: [auto]`: the host skill folders found (served in `config.skills` in its place) and refused. */
  hostFolders?: HostFolderScan;
}

/**
 * Layers defaults < file < env < flags, and puts the host skill folders found in place of `auto` (saying on stderr
 * which). On a bad config prints `path: message` lines and returns undefined (exit 2).
 */
export function resolveConfig(
  io: CliIo,
  flags: Partial<ConfigInput>,
  configFlag: string | undefined,
): ResolvedConfig | undefined {
  const env = configFromEnv(io.env);
  const file = configFlag ?? env.configFile;
  let loaded: LoadedConfig;
  try {
    loaded = loadConfig({ cwd: io.cwd, env: env.values, flags, ...(file === undefined ? {} : { file }) });
  } catch (e) {
    if (!isSkillsError(e) || e.code !== 'CONFIG_INVALID') throw e;
    return invalid(io, (e.details?.lines as string[] | undefined) ?? [e.message]);
  }
  const python = loaded.config.dependencies.python;
  const pythonWhy = python === undefined ? undefined : pythonProblem(python, io.env);
  const bad = [
    ...badReadOnlyPaths(loaded, io.env.HOME),
    ...(pythonWhy === undefined
      ? []
      : [`${loaded.file === undefined ? '' : `${loaded.file}: `}dependencies.python: ${pythonWhy}`]),
  ];
  if (bad.length > 0) return invalid(io, bad);
  return loaded.config.skills.includes(AUTO_SKILLS) ? withHostFolders(io, loaded) : loaded;
}

/** Replaces `auto` in `skills` with the host skill folders that exist and may be served, and says which on stderr. */
function withHostFolders(io: CliIo, loaded: LoadedConfig): ResolvedConfig {
  const scan = findHostSkillFolders({
    home: io.env.HOME ?? homedir(),
    project: io.cwd,
    uid: process.getuid?.() ?? -1,
  });
  const { config } = loaded;
  config.skills = config.skills.flatMap((p) => (p === AUTO_SKILLS ? scan.found.map((f) => f.real) : [p]));
  const lines = [
    ...scan.found.map((f) => `  ${f.host} (${f.scope}): ${f.path}`),
    ...scan.skipped.map((f) => `  ${f.host} (${f.scope}): ${f.path}: not served: ${f.reason}`),
  ];
  io.err(
    `skills-mcp: --skills auto found ${scan.found.length} host skill folder(s)${lines.length > 0 ? `\n${lines.map((l) => escapeForDisplay(l)).join('\n')}` : ''}\n`,
  );
  return { ...loaded, hostFolders: scan };
}

function invalid(io: CliIo, lines: readonly string[]): undefined {
  io.err(`skills-mcp: invalid configuration\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
  return undefined;
}

/** `sandbox.read_only_paths` entries that cannot be mounted: secrets, the server's own state, writable folders. */
function badReadOnlyPaths({ config, file }: LoadedConfig, home: string | undefined): string[] {
  const audit =
    config.audit !== undefined && isAbsolute(config.audit) ? [config.audit, dirname(config.audit)] : [];
  const state = [...audit, config.data_dir, config.dependencies.dir].filter(
    (p): p is string => p !== undefined && p !== '/',
  );
  const lines = readOnlyPathLines(config.sandbox.read_only_paths, 'sandbox.read_only_paths', {
    ...(home === undefined ? {} : { home }),
    serverPaths: state,
  });
  return lines.map((l) => (file === undefined ? l : `${file}: ${l}`));
}

/** Removes keys whose value is undefined, so they do not override lower layers. */
export const defined = <T extends Record<string, unknown>>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/**
 * Adds the checked-out folders of the pinned git sources (fetching one not fetched yet), then the archives, as roots.
 * A git source whose checkout differs from its pin stops the command: false, having said why and what fixes it.
 */
export function withSources<T extends LoadedConfig>(io: CliIo, loaded: T): boolean {
  const { config } = loaded;
  if (config.git_sources.length > 0) {
    const found = gitSourceRoots(config.git_sources, sourcesDir(config, io), io.env);
    if (found.problems.length > 0) {
      io.err(found.problems.map((p) => `skills-mcp: ${escapeForDisplay(p)}\n`).join(''));
      return false;
    }
    config.skills = [...config.skills, ...found.roots.map((r) => r.root)];
    config.git_roots = found.roots;
  }
  withArchives(io, loaded);
  return true;
}

/**
 * Adds the extracted `.skill` / `.zip` archives found in the skills folders as roots of their own (extracted under
 * `<state>/sources/archives/`), and says on stderr which archives were refused and why.
 */
function withArchives<T extends LoadedConfig>(io: CliIo, loaded: T): T {
  const { config } = loaded;
  const found = archiveRoots(config.skills, archivesDir(config, io));
  for (const f of found.findings) io.err(`skills-mcp: ${formatFinding(f, io.cwd)}\n`);
  if (found.roots.length > 0) config.skills = [...config.skills, ...found.roots];
  return loaded;
}

/** Where fetched and extracted sources are kept: `sources` in `data_dir`, else beside the audit database. */
export const sourcesDir = (config: Config, io: CliIo): string =>
  join(config.data_dir ?? dirname(resolveLocalBase(config, io)), 'sources');

/** Where skill archives are extracted. */
export const archivesDir = (config: Config, io: CliIo): string => join(sourcesDir(config, io), 'archives');
