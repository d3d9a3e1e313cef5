import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { setTimeout as delay } from 'node:timers/promises';
import { SkillsError } from '../errors.js';
import { approversPath } from './approvers-file.js';

const WAIT_MS = 10_000;

/** Whether the process that wrote `lockFile` is gone (or the file names none): its lock holds nothing. */
function isStale(lockFile: string): boolean {
  let pid: number;
  try {
    pid = Number(readFileSync(lockFile, 'utf8').trim());
  } catch {
    return false; // Released meanwhile: try again.
  }
  if (!Number.isInteger(pid) || pid <= 0) return true;
  try {
    process.kill(pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/**
 * Runs `fn` holding the lock of `<state>/approvers.json` (`approvers.json.lock`, created exclusively, holding the
 * holder's pid), so that the read-modify-writes of the file — enrolment, removal, a signature counter's update —
 * from every process are one after the other: a counter update that read the list before a removal cannot write the
 * removed passkey back. A lock whose process is gone is taken over; waiting more than 10 s fails (APPROVALS_BUSY).
 */
export async function withApproversLock<T>(stateDir: string, fn: () => T | Promise<T>): Promise<T> {
  const lockFile = `${approversPath(stateDir)}.lock`;
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const end = Date.now() + WAIT_MS;
  let pause = 2;
  for (;;) {
    let fd: number;
    try {
      fd = openSync(lockFile, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      if (isStale(lockFile)) rmSync(lockFile, { force: true });
      else if (Date.now() > end)
        throw new SkillsError('APPROVALS_BUSY', `${lockFile} is held by another process`, {
          hint: 'Another `skills-mcp approvers` or a server is changing the passkeys: try again.',
        });
      else await delay((pause = Math.min(pause * 2, 50)));
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n`);
    } finally {
      closeSync(fd);
    }
    try {
      return await fn();
    } finally {
      rmSync(lockFile, { force: true });
    }
  }
}
