import { posix, win32 } from 'node:path';

export interface AuditPathContext {
  env: Readonly<Record<string, string | undefined>>;
  platform: NodeJS.Platform;
  home: string;
}

/**
 * Where the audit DB lives when `--audit` is not given: `$XDG_STATE_HOME/skills-mcp/audit.db` when that is set
 * to an absolute path (any platform: an explicit choice wins), else `~/Library/Application Support/skills-mcp/`
 * on macOS, `%LOCALAPPDATA%\skills-mcp\` on Windows, and `~/.local/state/skills-mcp/` elsewhere.
 */
export function defaultAuditPath({ env, platform, home }: AuditPathContext): string {
  const path = platform === 'win32' ? win32 : posix;
  const xdg = env.XDG_STATE_HOME;
  if (xdg && path.isAbsolute(xdg)) return path.join(xdg, 'skills-mcp', 'audit.db');
  if (platform === 'darwin')
    return path.join(home, 'Library', 'Application Support', 'skills-mcp', 'audit.db');
  if (platform === 'win32') {
    const local =
      env.LOCALAPPDATA && path.isAbsolute(env.LOCALAPPDATA)
        ? env.LOCALAPPDATA
        : path.join(home, 'AppData', 'Local');
    return path.join(local, 'skills-mcp', 'audit.db');
  }
  return path.join(home, '.local', 'state', 'skills-mcp', 'audit.db');
}
