import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { SkillsError } from '../errors.js';
import type { Logger } from '../log.js';
import { packageRoot } from '../package-root.js';
import type { CallLog } from './call-log.js';
import type { AuditEvent } from './types.js';
import { relayLogLine } from './worker-log.js';
import {
  decodeError,
  type WireError,
  type WorkerMessage,
  type WorkerOp,
  type WorkerRequest,
  type WorkerSettings,
} from './worker-protocol.js';

export interface AuditWorkerOptions {
  /** The SQLite file (created, migrated and recovered by the worker). */
  path: string;
  anchors: WorkerSettings['anchors'];
  log: Logger;
  /** The SQLite binding (default auto). */
  sqliteDriver?: WorkerSettings['sqliteDriver'];
  /** The worker's script (default: the package's `dist/audit-worker.js`). */
  entry?: string;
}

/** The SQLite audit log written by a worker thread. */
export interface AuditWorker extends CallLog {
  readonly path: string;
  /** Writes everything sent so far, writes a last anchor, closes the database and ends the thread. Idempotent. */
  close(): Promise<void>;
}

/** The writer thread's young generation (V8 sizes it for the whole process otherwise: up to 48 MiB). */
const WORKER_YOUNG_MB = 8;

/** How long a closed worker may take to end its thread before it is stopped. */
const EXIT_GRACE_MS = 5_000;

/**
 * Opens the SQLite audit log in a worker thread that owns its connection (`serveAuditWorker`): validating,
 * hashing, inserting and the commit's fsync happen there, so the server's thread only hands events over and is
 * free to answer meanwhile. Every method is asynchronous and keeps the store's promise: a write that resolves is
 * durable, one that rejects (`AUDIT_FAILED`) wrote nothing, and requests are served in the order they were made.
 * Requests made in the same turn of the event loop travel in one message and their writes share one commit. If the
 * thread dies, every request from then on is refused with `AUDIT_FAILED`: gated calls fail closed. Resolves once
 * the log is open (recovered, verified and anchored); rejects as `openAuditStore` would.
 */
export function openAuditWorker(options: AuditWorkerOptions): Promise<AuditWorker> {
  const { path, log } = options;
  const settings: WorkerSettings = {
    path,
    anchors: options.anchors,
    logLevel: log.level,
    ...(options.sqliteDriver === undefined ? {} : { sqliteDriver: options.sqliteDriver }),
  };
  // stdout is the protocol in stdio mode: the thread's own stdout never reaches it.
  const worker = new Worker(options.entry ?? join(packageRoot(), 'dist', 'audit-worker.js'), {
    workerData: settings,
    stdout: true,
    // Its garbage is short-lived (a batch's events): a small young generation keeps the thread's memory small.
    resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB },
  });
  worker.stdout.on('data', (chunk: Buffer) =>
    log.warn({ text: chunk.toString('utf8').slice(0, 200) }, 'the audit worker wrote to stdout'),
  );
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
  let outbox: WorkerOp[] = [];
  let nextId = 1;
  let stopped: Error | undefined;
  let refusal: string | undefined;
  let closing: Promise<void> | undefined;
  let opened = false;
  let settleOpen!: { resolve: (log: AuditWorker) => void; reject: (err: Error) => void };
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));

  const settle = (id: number, outcome: { ok: true; value: unknown } | { ok: false; error: Error }) => {
    const p = pending.get(id);
    pending.delete(id);
    if (outcome.ok) p?.resolve(outcome.value);
    else p?.reject(outcome.error);
  };
  const send = () => {
    const ops = outbox;
    outbox = [];
    try {
      return worker.postMessage(ops);
    } catch {
      // A request that cannot be copied to the thread (not plain data) is refused alone; the others go.
    }
    for (const op of ops) {
      try {
        worker.postMessage([op]);
      } catch (cause) {
        const error = new SkillsError('AUDIT_FAILED', 'audit refused an event that is not plain data', {
          hint: 'The event was not written; do not go on with the step it records.',
          cause,
        });
        settle(op.id, { ok: false, error });
      }
    }
    if (pending.size === 0) worker.unref();
  };
  const request = <T>(req: WorkerRequest): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (stopped !== undefined) return reject(stopped);
      const id = nextId++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      // Keeps the process alive while a write is on its way; an idle worker does not.
      if (pending.size === 1) worker.ref();
      if (outbox.length === 0) setImmediate(send);
      outbox.push({ ...req, id });
    });

  const stop = (why: string, cause?: unknown) => {
    if (stopped !== undefined) return;
    stopped = new SkillsError('AUDIT_FAILED', `the audit log is not available: ${why}`, {
      hint: 'Nothing was written by this step. The server log says why the audit writer stopped.',
      ...(cause === undefined ? {} : { cause }),
    });
    if (closing === undefined)
      log.error({ err: cause, why }, 'the audit writer stopped: gated calls are refused');
    for (const p of pending.values()) p.reject(stopped);
    pending.clear();
    if (!opened) settleOpen.reject(stopped);
  };

  worker.on('message', (m: WorkerMessage) => {
    switch (m.kind) {
      case 'done':
        for (const r of m.replies)
          settle(r.id, r.ok ? { ok: true, value: r.value } : { ok: false, error: decodeError(r.error) });
        if (pending.size === 0) worker.unref();
        return;
      case 'log':
        return relayLogLine(log, m.line);
      case 'refused':
        refusal ??= m.reason;
        return;
      case 'ready':
        refusal ??= m.refused;
        opened = true;
        worker.unref();
        return settleOpen.resolve(auditLog);
      case 'failed':
        opened = true;
        closing = Promise.resolve();
        settleOpen.reject(decodeError(m.error));
        void worker.terminate();
        return;
    }
  });
  worker.on('error', (err) => stop('its thread failed', err));
  worker.on('exit', (code) => stop(`its thread ended (exit code ${code})`));

  const auditLog: AuditWorker = {
    path,
    startSessionAsync: (input, opts) =>
      request<AuditEvent<'session_started'>>({ m: 'startSession', input, sessionId: opts?.sessionId }),
    append: (input) => request({ m: 'append', input }),
    appendMany: (inputs) => request({ m: 'appendMany', inputs }),
    appendAsync: (input) => request({ m: 'append', input }),
    appendGroups: async (groups) =>
      (await request<(WireError | null)[]>({ m: 'appendGroups', groups })).map((e) =>
        e === null ? undefined : decodeError(e),
      ),
    endSession: (sessionId, reason) => request({ m: 'endSession', sessionId, reason }),
    sessionState: (sessionId) => request({ m: 'sessionState', sessionId }),
    sessionEvents: (sessionId, types) => request({ m: 'sessionEvents', sessionId, types }),
    listCalls: (filter) => request({ m: 'listCalls', filter }),
    getCall: (callId) => request({ m: 'getCall', callId }),
    runsRefused: () => refusal,
    close: () =>
      (closing ??= (async () => {
        if (stopped !== undefined) return;
        await request({ m: 'close' }).catch((err: unknown) =>
          log.warn({ err }, 'could not close the audit log cleanly'),
        );
        // The thread ends on its own once the database is closed (and saves its code cache in a build).
        worker.ref();
        const grace = setTimeout(() => void worker.terminate(), EXIT_GRACE_MS);
        grace.unref();
        await exited;
        clearTimeout(grace);
      })()),
  };

  return new Promise<AuditWorker>((resolve, reject) => {
    settleOpen = { resolve, reject };
  });
}
