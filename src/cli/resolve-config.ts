import { dirname, isAbsolute } from 'node:path';
import type { ConfigInput } from '../config/config-schema.js';
import { loadConfig, type LoadedConfig } from '../config/load-config.js';
import { pythonProblem } from '../envs/python-problem.js';
import { isSkillsError } from '../errors.js';
import { readOnlyPathLines } from '../sandbox/load-profile.js';
import { configFromEnv } from './env-config.js';
import type { CliIo } from './io.js';

/** Layers defaults < file < env < flags. On a bad config prints `path: message` lines and returns undefined (exit 2). */
export function resolveConfig(
  io: CliIo,
  flags: Partial<ConfigInput>,
  configFlag: string | undefined,
): LoadedConfig | undefined {
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
  return bad.length === 0 ? loaded : invalid(io, bad);
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
