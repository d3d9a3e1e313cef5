import { closeSync, constants, fstatSync, openSync, readSync } from 'node:fs';
import { resolve } from 'node:path';
import { SkillsError } from '../errors.js';

/** Fewest random bytes the shared requestState secret may hold (64 hex digits). */
export const MIN_STATE_KEY_BYTES = 32;
/** A longer file is not a key (and is not read whole). */
const MAX_STATE_KEY_CHARS = 1024;

const invalid = (message: string, cause?: unknown) =>
  new SkillsError('CONFIG_INVALID', message, {
    hint: 'Make one with `openssl rand -hex 32 > state.key && chmod 600 state.key` and give every replica the same file.',
    details: { path: 'http.state_key_file' },
    ...(cause === undefined ? {} : { cause }),
  });

/**
 * Reads the secret every replica shares to sign `requestState` (`http.state_key_file`, flag --state-key-file,
 * env SKILLS_MCP_STATE_KEY_FILE): a regular file holding at least 32 bytes as hex digits (surrounding whitespace
 * ignored), not writable by its group and not readable or writable by others. Group-readable is allowed, since
 * Kubernetes mounts secrets 0440 to the pod's fsGroup. The bytes go nowhere but into the key derivation; no
 * message here ever holds them.
 */
export function readStateKey(file: string, cwd: string): Buffer {
  const path = resolve(cwd, file);
  let fd: number;
  try {
    // Non-blocking: opening a FIFO for reading would otherwise wait for a writer, before any check, deaf to signals.
    fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch (cause) {
    throw invalid(`cannot read ${file}: ${(cause as NodeJS.ErrnoException).code ?? 'error'}`, cause);
  }
  let text: string;
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw invalid(`${file} is not a regular file`);
    if ((st.mode & 0o027) !== 0) {
      throw invalid(
        `${file} is open to other users (mode ${(st.mode & 0o777).toString(8).padStart(3, '0')}; chmod 600 it)`,
      );
    }
    const buf = Buffer.alloc(MAX_STATE_KEY_CHARS + 1);
    let n = 0;
    for (let r = 1; r > 0 && n < buf.length; n += r) r = readSync(fd, buf, n, buf.length - n, null);
    if (n > MAX_STATE_KEY_CHARS) throw invalid(`${file} is longer than ${MAX_STATE_KEY_CHARS} characters`);
    text = buf.subarray(0, n).toString('latin1').trim();
    buf.fill(0);
  } finally {
    closeSync(fd);
  }
  if (!/^(?:[0-9a-fA-F]{2})+$/.test(text)) throw invalid(`${file} must hold the key as hex digits only`);
  if (text.length < MIN_STATE_KEY_BYTES * 2) {
    throw invalid(`${file} holds ${text.length / 2} bytes; at least ${MIN_STATE_KEY_BYTES} are needed`);
  }
  return Buffer.from(text, 'hex');
}
