import { spawn as nodeSpawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import { SkillsError } from '../errors.js';
import { createCappedBuffer } from './capped-buffer.js';
import type { OutputChunk, SandboxResult } from './types.js';

export type SpawnFn = typeof nodeSpawn;

/** What the child gets at fd 3, 4, …: a pipe we write into later, or an open fd of ours. */
export type ExtraFd = 'pipe' | 'ignore' | { fd: number };

export interface PrepareSpec {
  command: string;
  args: string[];
  /** The complete environment (nothing is inherited). */
  env: Record<string, string>;
  cwd?: string;
  uid?: number;
  gid?: number;
  /** fd 3, 4, … in order. */
  extraFds?: ExtraFd[];
}

export interface StartSpec {
  /**
   * Bytes written to extra pipes, by fd number; every extra pipe is closed after its bytes. Bytes still to come (a
   * promise) are written when they come; the pipe is closed without them if the child exits first.
   */
  data?: ReadonlyMap<number, Uint8Array | Promise<Uint8Array>>;
  /** Bytes written to stdin, then closed; like `data`'s, bytes still to come are written when they come. */
  stdin?: Uint8Array | Promise<Uint8Array>;
  wallTimeMs: number;
  maxOutputBytes: number;
  signal?: AbortSignal;
  onOutput?: (chunk: OutputChunk) => void;
  /** Readers of what the child writes into its extra pipes, by fd number. */
  read?: ReadonlyMap<number, (chunk: Buffer) => void>;
  /**
   * When the run begins, for a child that waits for a word of the caller's before it runs anything: the wall-time
   * limit and the duration count from its fulfilment. Rejected, they never start (the caller discards the child).
   */
  begin?: Promise<void>;
}

/** How a child ended: a sandbox result before the adapter adds what only it knows. */
export type ChildOutcome = Omit<SandboxResult, 'oomKilled' | 'evidence'>;

export interface ChildDeps {
  spawn?: SpawnFn;
  now?: () => number;
}

/** A spawned process that waits for its input (fds and stdin) before doing anything. */
export interface PreparedChild {
  readonly pid: number | undefined;
  /** False once it exited or failed to spawn. */
  isAlive(): boolean;
  start(spec: StartSpec): Promise<ChildOutcome>;
  /** Ends an unused child: closes its pipes (a waiting launcher then exits) and kills its group. */
  discard(): void;
}

/** After exit, how long to wait for pipes still held open by a leftover before closing them ourselves. */
const CLOSE_GRACE_MS = 2_000;

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch {
    // group already gone
  }
}

/**
 * Spawns a process in its own process group with a clean env, ready to be started later. `start` feeds its
 * pipes, kills the group with SIGKILL on the wall limit or on abort, and keeps at most `maxOutputBytes` of
 * each stream while draining the rest.
 */
export function prepareChild(spec: PrepareSpec, deps: ChildDeps = {}): PreparedChild {
  const spawn = deps.spawn ?? nodeSpawn;
  const now = deps.now ?? (() => performance.now());
  const extras = spec.extraFds ?? [];
  const stdio: StdioOptions = [
    'pipe',
    'pipe',
    'pipe',
    ...extras.map((e) => (typeof e === 'object' ? e.fd : e)),
  ];
  const child = spawn(spec.command, spec.args, {
    env: spec.env,
    stdio,
    detached: true, // own process group (setsid), so the whole group can be killed
    ...(spec.cwd === undefined ? {} : { cwd: spec.cwd }),
    ...(spec.uid === undefined ? {} : { uid: spec.uid }),
    ...(spec.gid === undefined ? {} : { gid: spec.gid }),
  });
  let spawnError: Error | undefined;
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  child.on('error', (e) => (spawnError = e));
  child.on('exit', (code, signal) => (exited = { code, signal }));
  for (const s of child.stdio) (s as Readable | Writable | null)?.on('error', () => undefined); // EPIPE is not ours
  const writable = (fd: number) => child.stdio[fd] as Writable | null | undefined;
  const feed = (w: Writable | null | undefined, bytes?: Uint8Array) => {
    if (w === null || w === undefined || w.writableEnded) return;
    if (bytes !== undefined && bytes.length > 0) w.write(bytes);
    w.end();
  };
  const feedWhenReady = (w: Writable | null | undefined, bytes?: Uint8Array | Promise<Uint8Array>) => {
    if (!(bytes instanceof Promise)) return feed(w, bytes);
    bytes.then(
      (b) => feed(w, b),
      () => feed(w),
    );
    child.once('exit', () => feed(w));
  };
  const closeInputs = (data?: StartSpec['data'], stdin?: StartSpec['stdin']) => {
    extras.forEach((e, i) => {
      if (e === 'pipe') feedWhenReady(writable(3 + i), data?.get(3 + i));
    });
    feedWhenReady(child.stdin, stdin);
  };

  return {
    pid: child.pid,
    isAlive: () => spawnError === undefined && exited === undefined && child.pid !== undefined,
    discard() {
      closeInputs();
      killGroup(child);
    },
    start(s) {
      return new Promise<ChildOutcome>((resolve, reject) => {
        if (spawnError !== undefined || child.pid === undefined) {
          reject(new SkillsError('SANDBOX_FAILED', `could not start ${spec.command}`, { cause: spawnError }));
          return;
        }
        const out = createCappedBuffer(s.maxOutputBytes);
        const err = createCappedBuffer(s.maxOutputBytes);
        let timedOut = false;
        let cancelled = false;
        let settled = false;
        let graceTimer: NodeJS.Timeout | undefined;
        let started: number | undefined;
        let timer: NodeJS.Timeout | undefined;
        const clock = () => {
          if (settled) return;
          started = now();
          timer = setTimeout(() => {
            timedOut = true;
            killGroup(child);
          }, s.wallTimeMs);
        };
        if (s.begin === undefined) clock();
        else s.begin.then(clock, () => undefined);
        const onAbort = () => {
          cancelled = true;
          killGroup(child);
        };
        if (s.signal?.aborted === true) onAbort();
        else s.signal?.addEventListener('abort', onAbort, { once: true });

        const finish = () => {
          if (settled || exited === undefined) return;
          settled = true;
          clearTimeout(timer);
          clearTimeout(graceTimer);
          s.signal?.removeEventListener('abort', onAbort);
          resolve({
            exitCode: exited.code,
            signal: exited.signal,
            stdout: out.result(),
            stderr: err.result(),
            truncated: { stdout: out.truncated, stderr: err.truncated },
            bytes: { stdout: out.total, stderr: err.total },
            durationMs: started === undefined ? 0 : Math.round((now() - started) * 10) / 10,
            timedOut,
            cancelled,
          });
        };
        const collect = (stream: Readable | null, buf: typeof out, name: OutputChunk['stream']) =>
          stream?.on('data', (chunk: Buffer) => {
            buf.push(chunk);
            s.onOutput?.({ stream: name, bytes: chunk.length });
          });
        for (const [fd, onData] of s.read ?? []) (child.stdio[fd] as Readable | null)?.on('data', onData);
        collect(child.stdout, out, 'stdout');
        collect(child.stderr, err, 'stderr');
        const onExit = () => {
          // A leftover holding our pipes must not hold the result: close them after a grace period.
          graceTimer = setTimeout(() => {
            child.stdout?.destroy();
            child.stderr?.destroy();
            finish();
          }, CLOSE_GRACE_MS);
        };
        if (exited !== undefined) onExit();
        else child.once('exit', onExit);
        child.once('close', finish);
        closeInputs(s.data, s.stdin);
      });
    },
  };
}

/** Spawns and starts at once. */
export function runChild(spec: PrepareSpec & StartSpec, deps: ChildDeps = {}): Promise<ChildOutcome> {
  if (spec.signal?.aborted === true) {
    return Promise.reject(new SkillsError('SANDBOX_FAILED', 'run cancelled before it started'));
  }
  return prepareChild(spec, deps).start(spec);
}
