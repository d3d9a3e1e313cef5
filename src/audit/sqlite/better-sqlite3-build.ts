import { readFileSync } from 'node:fs';
import { isAbsolute, join } from 'node:path';

const versionOf = (text: string, what: string) =>
  new RegExp(`#define NODE_${what}_VERSION (\\d+)`).exec(text)?.[1];

/**
 * The Node release whose headers better-sqlite3's native module was compiled against, when it was built from source
 * here (node-gyp leaves `build/config.gypi`: its `nodedir`'s `node_version.h`, else the Node that ran npm, named in
 * its `user_agent`). Undefined for a prebuilt binary or anything unreadable: nothing is known then.
 */
export function betterSqlite3BuiltFor(packageDir: string): string | undefined {
  let config: string;
  try {
    config = readFileSync(join(packageDir, 'build', 'config.gypi'), 'utf8');
  } catch {
    return undefined;
  }
  const nodedir = /"nodedir":\s*"([^"]+)"/.exec(config)?.[1];
  if (nodedir !== undefined && isAbsolute(nodedir)) {
    try {
      const h = readFileSync(join(nodedir, 'include', 'node', 'node_version.h'), 'utf8');
      const [major, minor, patch] = ['MAJOR', 'MINOR', 'PATCH'].map((w) => versionOf(h, w));
      if (major !== undefined && minor !== undefined && patch !== undefined)
        return `${major}.${minor}.${patch}`;
    } catch {
      // The headers were a temporary download: fall back to the Node that ran the build.
    }
  }
  return /"user_agent":\s*"[^"]*\bnode\/v(\d+\.\d+\.\d+)\b/.exec(config)?.[1];
}

/**
 * Whether a module built against `built`'s headers is running on an earlier release of the same line. Node keeps
 * a line's ABI working forwards only (built on 24.0, runs on 24.22): built on 24.22.3, better-sqlite3 aborts the
 * process in 24.21.0 when a statement is garbage-collected (`RemoveEnvironmentCleanupHook`: `(env) != nullptr`).
 */
export function builtForLaterRelease(built: string, running: string = process.versions.node): boolean {
  const b = built.split('.').map(Number);
  const r = running.split('.').map(Number);
  if (b[0] !== r[0]) return false; // another line: the ABI check at load says so
  for (let i = 1; i < 3; i++) if ((b[i] ?? 0) !== (r[i] ?? 0)) return (b[i] ?? 0) > (r[i] ?? 0);
  return false;
}

/** The error a binding built against a later release of this Node line gives (see `builtForLaterRelease`). */
export class BuiltForLaterNodeError extends Error {
  constructor(readonly builtFor: string) {
    super(`its native module was compiled against Node ${builtFor}'s headers, a later release than this one`);
  }
}
