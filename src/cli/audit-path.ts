import { homedir } from 'node:os';
import { defaultAuditPath } from '../audit/default-audit-path.js';
import type { Config } from '../config/config-schema.js';
import type { CliIo } from './io.js';

/** `--audit` / `audit:` / SKILLS_MCP_AUDIT, else the platform default (DESIGN §10). */
export const resolveAuditPath = (config: Config, io: CliIo): string =>
  config.audit ?? defaultAuditPath({ env: io.env, platform: process.platform, home: homedir() });

/** Takes `--audit PATH` / `--audit=PATH` and `--config FILE` out of a subcommand's args. */
export function takeGlobalFlags(args: string[]): { rest: string[]; audit?: string; config?: string } {
  const rest: string[] = [];
  const found: { audit?: string; config?: string } = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    const m = /^--(audit|config)(?:=(.*))?$/.exec(a);
    if (m === null) {
      rest.push(a);
      continue;
    }
    const value = m[2] ?? args[++i];
    if (value !== undefined) found[m[1] as 'audit' | 'config'] = value;
  }
  return { rest, ...found };
}
