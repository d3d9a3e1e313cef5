import { spawn as nodeSpawn, type StdioOptions } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { SkillsError } from '../errors.js';
import { createCappedBuffer } from './capped-buffer.js';
import type { OutputChunk } from './types.js';

export type SpawnFn = typeof nodeSpawn;

/** Something handed to the child at fd 3, 4, …: bytes on a pipe, or an open fd of ours. */
export type ExtraFd = { data: Buffer } | { fd: number };

export interface ChildSpec {
  command: string;
  args: string[];
  /** The complete environment (nothing is inherited). */
  env: Record<string, string>;
  cwd?: string;
  uid?: number;
  gid?: number;
  /** fd 3, 4, … in order. */
  extraFds?: ExtraFd[];
  stdin?: Uint8Array;
  wallTimeMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  onOutput?: (chunk: OutputChunk) => void;
}

export interface ChildOutcome {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  stdout: Buffer;
  stderr: Buffer;
  truncated: { stdout: boolean; stderr: boolean };
  bytes: { stdout: number; stderr: number };
  durationMs: number;
  timedOut: boolean;
  cancelled: boolean;
}

export interface ChildDeps {
  spawn?: SpawnFn;
  now?: () => number;
}

/** After exit, how long to wait for pipes still held open by a leftover before closing them ourselves. */
const CLOSE_GRACE_MS = 2_000;

/**
 * Runs one process in its own process group with a clean env; kills the group with SIGKILL on the wall
 * limit or on abort; keeps at most `maxOutputBytes` of each stream while draining the rest.
 */
export function runChild(spec: ChildSpec, deps: ChildDeps = {}): Promise<ChildOutcome> {
  const spawn = deps.spawn ?? nodeSpawn;
  const now = deps.now ?? (() => performance.now());
  const extras = spec.extraFds ?? [];
  const stdio: StdioOptions = ['pipe', 'pipe', 'pipe', ...extras.map((e) => ('fd' in e ? e.fd : 'pipe'))];
  const started = now();

  return new Promise<ChildOutcome>((resolve, reject) => {
    if (spec.signal?.aborted === true) {
      reject(new SkillsError('SANDBOX_FAILED', 'run cancelled before it started'));
      return;
    }
    const child = spawn(spec.command, spec.args, {
      env: spec.env,
      stdio,
      detached: true, // own process group (setsid), so the whole group can be killed
      ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
      ...(spec.uid === undefined ? {} : { uid: spec.uid }),
      ...(spec.gid === undefined ? {} : { gid: spec.gid }),
    });
    const out = createCappedBuffer(spec.maxOutputBytes);
    const err = createCappedBuffer(spec.maxOutputBytes);
    let timedOut = false;
    let cancelled = false;
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    let settled = false;

    const killGroup = () => {
      if (child.pid === undefined) return;
      try {
        process.kill(-child.pid, 'SIGKILL');
      } catch {
        // group already gone
      }
    };
    const timer = setTimeout(() => {
      timedOut = true;
      killGroup();
    }, spec.wallTimeMs);
    const onAbort = () => {
      cancelled = true;
      killGroup();
    };
    spec.signal?.addEventListener('abort', onAbort, { once: true });
    let graceTimer: NodeJS.Timeout | undefined;

    const finish = () => {
      if (settled || exited === undefined) return;
      settled = true;
      clearTimeout(timer);
      clearTimeout(graceTimer);
      spec.signal?.removeEventListener('abort', onAbort);
      resolve({
        exitCode: exited.code,
        signal: exited.signal,
        stdout: out.result(),
        stderr: err.result(),
        truncated: { stdout: out.truncated, stderr: err.truncated },
        bytes: { stdout: out.total, stderr: err.total },
        durationMs: Math.round((now() - started) * 10) / 10,
        timedOut,
        cancelled,
      });
    };

    const collect = (stream: Readable | null, buf: typeof out, name: OutputChunk['stream']) => {
      stream?.on('data', (chunk: Buffer) => {
        buf.push(chunk);
        spec.onOutput?.({ stream: name, bytes: chunk.length });
      });
      stream?.on('error', () => undefined);
    };
    collect(child.stdout, out, 'stdout');
    collect(child.stderr, err, 'stderr');

    child.on('error', (e) => {
      clearTimeout(timer);
      spec.signal?.removeEventListener('abort', onAbort);
      settled = true;
      reject(new SkillsError('SANDBOX_FAILED', `could not start ${spec.command}`, { cause: e }));
    });
    child.on('exit', (code, signal) => {
      exited = { code, signal };
      // A leftover holding our pipes must not hold the result: close them after a grace period.
      graceTimer = setTimeout(() => {
        child.stdout?.destroy();
        child.stderr?.destroy();
        finish();
      }, CLOSE_GRACE_MS);
    });
    child.on('close', finish);

    const feed = (w: Writable | null | undefined, data: Uint8Array | undefined) => {
      if (w === null || w === undefined) return;
      w.on('error', () => undefined); // EPIPE when the reader exits early is not our failure
      if (data !== undefined && data.length > 0) w.write(data);
      w.end();
    };
    feed(child.stdin, spec.stdin);
    extras.forEach((e, i) => {
      if ('data' in e) feed(child.stdio[3 + i] as Writable | null, e.data);
    });
  });
}
