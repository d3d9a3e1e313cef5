import { constants } from 'node:fs';
import { access, realpath, stat } from 'node:fs/promises';

/**
 * Where bubblewrap may live. Never PATH, never the working directory: a `bwrap` planted there by a skill or
 * a checkout must not become the sandbox.
 */
export const BWRAP_CANDIDATES: readonly string[] = ['/usr/bin/bwrap', '/usr/local/bin/bwrap'];

export interface TrustedBinary {
  /** Real path of the binary. */
  path: string;
}

export type BinaryCheck = { ok: true; path: string } | { ok: false; reason: string };

/**
 * A binary is trusted when it is a regular executable file owned by root (or by the server's own user)
 * that neither group nor others can write.
 */
export async function checkTrustedBinary(file: string, ownUid: number): Promise<BinaryCheck> {
  try {
    const real = await realpath(file);
    const st = await stat(real);
    if (!st.isFile()) return { ok: false, reason: `${file} is not a regular file` };
    if (st.uid !== 0 && st.uid !== ownUid) return { ok: false, reason: `${file} is not owned by root` };
    if ((st.mode & 0o022) !== 0) return { ok: false, reason: `${file} is writable by group or others` };
    if ((st.mode & 0o4000) !== 0) return { ok: false, reason: `${file} is setuid; use a non-setuid bwrap` };
    await access(real, constants.X_OK);
    return { ok: true, path: real };
  } catch {
    return { ok: false, reason: `${file} not found` };
  }
}

/** The first trusted bubblewrap among `candidates`, or why none is usable. */
export async function findBwrap(
  candidates: readonly string[] = BWRAP_CANDIDATES,
  ownUid = 0,
): Promise<{ path?: string; tried: string[] }> {
  const tried: string[] = [];
  for (const c of candidates) {
    if (!c.startsWith('/')) {
      tried.push(`${c} is not an absolute path`);
      continue;
    }
    const r = await checkTrustedBinary(c, ownUid);
    if (r.ok) return { path: r.path, tried };
    tried.push(r.reason);
  }
  return { tried };
}
