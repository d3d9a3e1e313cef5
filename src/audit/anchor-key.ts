import { randomBytes } from 'node:crypto';
import {
  closeSync,
  existsSync,
  fsyncSync,
  linkSync,
  mkdirSync,
  openSync,
  readFileSync,
  rmSync,
  statSync,
  writeSync,
} from 'node:fs';
import { dirname } from 'node:path';
import { SkillsError } from '../errors.js';

const KEY_HEX = /^[0-9a-f]{64,}$/;

/**
 * The key that signs audit anchors: 32 random bytes, hex, in a file of its own (never in the database). With
 * `create`, a missing file is made (0600, its folder 0700); an existing one is read as it is. Refuses a file that
 * other users may read or write, or that does not hold at least 64 hex digits.
 */
export function loadAnchorKey(path: string, opts: { create: boolean }): Buffer {
  if (opts.create) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    if (!existsSync(path)) createKeyFile(path);
  }
  let text: string;
  try {
    if ((statSync(path).mode & 0o077) !== 0)
      throw new SkillsError('CONFIG_INVALID', `the audit anchor key ${path} is open to other users`, {
        hint: `chmod 600 ${path}`,
      });
    text = readFileSync(path, 'utf8').trim();
  } catch (e) {
    if (e instanceof SkillsError) throw e;
    throw keyError(path, 'cannot read', e);
  }
  if (!KEY_HEX.test(text))
    throw new SkillsError('CONFIG_INVALID', `the audit anchor key ${path} is not 64+ lowercase hex digits`, {
      hint: 'Delete it to have a new one made, or write `openssl rand -hex 32` into it.',
    });
  return Buffer.from(text, 'hex');
}

/**
 * Writes a new key beside `path` and links it in place: another process reading the key (a command started while
 * the server makes it) sees no file or the whole key, never a part, and an existing key is never replaced.
 */
function createKeyFile(path: string): void {
  const tmp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const fd = openSync(tmp, 'wx', 0o600);
    try {
      writeSync(fd, `${randomBytes(32).toString('hex')}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    linkSync(tmp, path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw keyError(path, 'cannot create', e);
  } finally {
    rmSync(tmp, { force: true });
  }
}

const keyError = (path: string, what: string, cause: unknown) =>
  new SkillsError('CONFIG_INVALID', `${what} the audit anchor key ${path}`, {
    hint: 'Check the path (config audit_anchors.key_file) and its permissions.',
    cause,
  });
