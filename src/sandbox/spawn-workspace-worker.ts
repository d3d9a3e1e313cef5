import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { SkillsError } from '../errors.js';
import { packageRoot } from '../package-root.js';
import { createFrameReader, encodeFrame, type Frame } from './workspace-frames.js';

/** A worker doing the host side of one workspace copy or apply (`serve-workspace-worker.ts`). */
export interface WorkspaceWorker {
  send(header: Record<string, unknown>, body?: Buffer): Promise<void>;
  /** The next frame it sent; undefined once it ended (check `done()`). */
  next(): Promise<Frame | undefined>;
  /** Ends it (stdin closed, then SIGKILL by pid past a grace period); rejects if it failed. Idempotent. */
  done(): Promise<void>;
}

/** Bounds on what the worker may send: a header is one small JSON object, a body one file of the copy. */
/** A copy-in's bodies add up to at most the workspace copy's size limit (`MAX_WORKSPACE_BYTES`), all of them. */
const LIMITS = {
  maxHeaderBytes: 16 * 1024,
  maxBodyBytes: 512 * 1024 * 1024,
  maxTotalBodyBytes: 512 * 1024 * 1024,
};
const STDERR_BYTES = 2048;
const GRACE_MS = 5_000;

/** The primary group of `uid`, from /etc/passwd; nogroup (65534) when it is not listed. */
export function primaryGid(uid: number, passwd = '/etc/passwd'): number {
  let text = '';
  try {
    text = readFileSync(passwd, 'utf8');
  } catch {
    return 65534;
  }
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f.length >= 4 && Number(f[2]) === uid && /^\d+$/.test(f[3] ?? '')) return Number(f[3]);
  }
  return 65534;
}

/**
 * The identity the host side of a workspace copy runs as: the owner of the workspace folder when the server is
 * root and the owner is not; else the server's own (undefined: no switch). A root-owned workspace is worked on as
 * root (see docs/architecture.md for what then holds).
 */
export function workerIdentity(
  ownerUid: number,
  serverUid: number,
): { uid: number; gid: number } | undefined {
  if (serverUid !== 0 || ownerUid === 0) return undefined;
  return { uid: ownerUid, gid: primaryGid(ownerUid) };
}

const failed = (message: string, cause?: unknown) =>
  new SkillsError('SANDBOX_FAILED', message, {
    hint: 'The host side of a workspace copy runs as the workspace owner: that user must be able to run Node and read the skills-mcp package (dist/workspace-worker.js). Nothing was applied.',
    ...(cause === undefined ? {} : { cause }),
  });

/**
 * Starts the worker on the workspace folder `rootFd` (its fd 3), as `as` when given. Its stdout carries frames
 * only and is never the server's; its stderr is kept (bounded) for the error.
 */
export function spawnWorkspaceWorker(
  rootFd: number,
  as: { uid: number; gid: number } | undefined,
  entry = join(packageRoot(), 'dist', 'workspace-worker.js'),
): WorkspaceWorker {
  const child = spawn(process.execPath, ['--max-old-space-size=256', entry], {
    cwd: '/',
    env: {},
    stdio: ['pipe', 'pipe', 'pipe', rootFd],
    ...(as === undefined ? {} : { uid: as.uid, gid: as.gid }),
  }) as unknown as ChildProcessWithoutNullStreams;
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    if (stderr.length < STDERR_BYTES) stderr += d.toString('utf8').slice(0, STDERR_BYTES - stderr.length);
  });
  const exited = new Promise<{ code: number | null; error?: Error }>((resolve) => {
    child.once('error', (error) => resolve({ code: null, error }));
    child.once('exit', (code) => resolve({ code }));
  });
  const reader = createFrameReader(LIMITS);
  const queue: Frame[] = [];
  let waiting: ((f: Frame | undefined) => void) | undefined;
  let ended = false;
  let broken: Error | undefined;
  let ending: Promise<void> | undefined;
  const wake = () => {
    if (waiting === undefined) return;
    const f = queue.shift();
    if (f === undefined && !ended) return;
    const w = waiting;
    waiting = undefined;
    w(f);
  };
  child.stdout.on('data', (d: Buffer) => {
    try {
      queue.push(...reader.push(d));
    } catch (e) {
      broken = e as Error;
      child.kill('SIGKILL');
    }
    // Backpressure: a reader far behind pauses the worker.
    if (queue.length > 64) child.stdout.pause();
    wake();
  });
  child.stdout.once('close', () => {
    ended = true;
    wake();
  });
  child.stdin.on('error', () => undefined);
  return {
    send: (header, body) =>
      new Promise((resolve, reject) =>
        child.stdin.write(encodeFrame(header, body), (err) =>
          err ? reject(failed('the workspace worker stopped', err)) : resolve(),
        ),
      ),
    next() {
      if (queue.length <= 16) child.stdout.resume();
      const f = queue.shift();
      if (f !== undefined || ended) return Promise.resolve(f);
      return new Promise((resolve) => {
        waiting = resolve;
      });
    },
    done() {
      ending ??= end();
      return ending;
    },
  };

  async function end(): Promise<void> {
    child.stdin.end();
    const timer = setTimeout(() => child.kill('SIGKILL'), GRACE_MS);
    const r = await exited;
    clearTimeout(timer);
    if (broken !== undefined) throw failed('the workspace worker sent a malformed record', broken);
    if (r.error !== undefined) throw failed('could not start the workspace worker', r.error);
    if (r.code !== 0 || reader.pending() > 0)
      // Its stderr can name files the sandbox user was never shown: the operator's log gets it (as the cause),
      // the message does not.
      throw failed(`the workspace worker failed (exit ${r.code ?? 'signal'})`, new Error(stderr.trim()));
  }
}
