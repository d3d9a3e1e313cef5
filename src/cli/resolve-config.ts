import type { ConfigInput } from '../config/config-schema.js';
import { loadConfig, type LoadedConfig } from '../config/load-config.js';
import { isSkillsError } from '../errors.js';
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
  try {
    return loadConfig({ cwd: io.cwd, env: env.values, flags, ...(file === undefined ? {} : { file }) });
  } catch (e) {
    if (!isSkillsError(e) || e.code !== 'CONFIG_INVALID') throw e;
    const lines = (e.details?.lines as string[] | undefined) ?? [e.message];
    io.err(`skills-mcp: invalid configuration\n${lines.map((l) => `  ${l}`).join('\n')}\n`);
    return undefined;
  }
}

/** Removes keys whose value is undefined, so they do not override lower layers. */
export const defined = <T extends Record<string, unknown>>(o: T): Partial<T> =>
  Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
