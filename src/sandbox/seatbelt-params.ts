import { isAbsolute, normalize } from 'node:path';
import { SkillsError } from '../errors.js';

/**
 * macOS profiles are fixed text (`sandbox-profiles/<name>.sb`) that read paths only through
 * `(param "…")`; values arrive as `sandbox-exec -D KEY=VALUE`, never interpolated into profile text.
 * SBPL has no loops, so paths go into numbered slots; unused slots hold `/dev/null`.
 */
export const SEATBELT_SLOTS = { readOnly: 16, writable: 8 } as const;
export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';
const UNUSED = '/dev/null';

export interface SeatbeltPaths {
  /** Real paths (macOS resolves /tmp → /private/tmp before matching). */
  readOnly: string[];
  writable: string[];
  /** The run's private temp folder (TMPDIR inside). */
  tmpDir: string;
}

/** Absolute, normalized, and free of characters that have no business in a path parameter. */
export function assertSeatbeltPath(p: string): void {
  if (!isAbsolute(p) || normalize(p) !== p || (p !== '/' && p.endsWith('/'))) {
    throw new SkillsError(
      'SANDBOX_FAILED',
      `seatbelt path must be absolute and normalized: ${JSON.stringify(p)}`,
    );
  }
  if (/[\0\n\r"'\\()]/.test(p)) {
    throw new SkillsError(
      'SANDBOX_FAILED',
      `seatbelt path holds a forbidden character: ${JSON.stringify(p)}`,
    );
  }
  if (p === '/') throw new SkillsError('SANDBOX_FAILED', 'seatbelt path cannot be /');
}

function slots(prefix: string, paths: readonly string[], count: number): Record<string, string> {
  if (paths.length > count) {
    throw new SkillsError('SANDBOX_FAILED', `at most ${count} ${prefix.toLowerCase()} paths on macOS`);
  }
  const out: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const p = paths[i] ?? UNUSED;
    if (p !== UNUSED) assertSeatbeltPath(p);
    out[`${prefix}_${i}`] = p;
  }
  return out;
}

/** Every `-D` parameter the profiles read. */
export function seatbeltParams(p: SeatbeltPaths): Record<string, string> {
  assertSeatbeltPath(p.tmpDir);
  return {
    ...slots('READ_ONLY', p.readOnly, SEATBELT_SLOTS.readOnly),
    ...slots('WRITABLE', p.writable, SEATBELT_SLOTS.writable),
    TMPDIR: p.tmpDir,
  };
}

/** `sandbox-exec -f <profile> -D K=V … <payload…>`; the payload's argv[0] must be absolute. */
export function seatbeltArgv(
  profileFile: string,
  params: Record<string, string>,
  payload: readonly string[],
): string[] {
  const first = payload[0];
  if (first === undefined || !isAbsolute(first)) {
    throw new SkillsError('SANDBOX_FAILED', 'seatbelt payload must start with an absolute path');
  }
  const argv = [SANDBOX_EXEC, '-f', profileFile];
  for (const [k, v] of Object.entries(params)) argv.push('-D', `${k}=${v}`);
  return [...argv, ...payload];
}
