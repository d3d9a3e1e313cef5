import { existsSync } from 'node:fs';
import type { MessagePort } from 'node:worker_threads';
import { loadAnchorKey } from './anchor-key.js';
import { SkillsError, isSkillsError } from '../errors.js';
import type { Logger } from '../log.js';
import { createMemoryReclaimer } from '../memory-reclaimer.js';
import type { AuditStore } from './audit-store.js';
import { openAuditStore } from './open-audit-store.js';
import { isRunEvent } from './assert-runs-allowed.js';
import { startAnchoring, type Anchoring } from './start-anchoring.js';
import type { VerifyResult } from './types.js';
import { verifyInSteps } from './verify-in-steps.js';
import { createWorkerLogger } from './worker-log.js';
import {
  encodeError,
  type WorkerMessage,
  type WorkerOp,
  type WorkerReply,
  type WorkerSettings,
} from './worker-protocol.js';

type WriteOp = Extract<
  WorkerOp,
  { m: 'startSession' | 'append' | 'appendMany' | 'appendGroups' | 'endSession' }
>;
type ReadOp = Exclude<WorkerOp, WriteOp | { m: 'close' }>;

/** How long the writer waits, after its last request, before it collects its heap. */
const IDLE_MS = 2_000;

const WRITES = new Set<WorkerOp['m']>(['startSession', 'append', 'appendMany', 'appendGroups', 'endSession']);
const isWrite = (op: WorkerOp): op is WriteOp => WRITES.has(op.m);

/**
 * The audit worker (runs in its own thread, see `openAuditWorker`): opens the SQLite log with its own connection
 * (recovery, chain check, anchoring), then serves the requests the server's thread sends, in the order sent. The
 * writes that arrive together — in one message, or while the previous commit was running — go into one IMMEDIATE
 * transaction (one fsync), each in its own savepoint so that a refused event fails alone; the answers go back once
 * that transaction has committed. Reads are answered in turn, so they see every write sent before them.
 */
export function serveAuditWorker(port: MessagePort, settings: WorkerSettings): void {
  const post = (m: WorkerMessage) => port.postMessage(m);
  const log = createWorkerLogger(settings.logLevel, (line) => post({ kind: 'log', line }));
  let store: AuditStore;
  let key: { key: Buffer; isNew: boolean } | undefined;
  try {
    // The key first: every event this server appends, recovery's too, is marked as written by its holder.
    key = loadWriterKey(settings.anchors.keyFile, log);
    // The chain is checked below, in steps, once the log serves: never on the path of the first answers.
    store = openAuditStore({
      path: settings.path,
      log,
      verifyOnOpen: false,
      ...(settings.sqliteDriver === undefined ? {} : { sqliteDriver: settings.sqliteDriver }),
      ...(key === undefined ? {} : { writerKey: key.key }),
    });
  } catch (e) {
    post({ kind: 'failed', error: encodeError(e) });
    port.close();
    return;
  }
  reportRecovery(store, log);
  // Refusals (the anchoring found the log or its anchors changed) reach the server's `runsRefused()`.
  const refuseRuns = (reason: string) => {
    const before = store.runsRefused();
    store.refuseRuns(reason);
    if (before === undefined) post({ kind: 'refused', reason: store.runsRefused() ?? reason });
  };
  let anchoring: Anchoring | undefined;
  /**
   * Until the whole chain is checked, a write that would ask a person or start a process waits (with everything
   * sent after it, so the order holds): runs start only on a log that vouches for itself, as when the check ran
   * before the log served. Sessions and read-only records are written meanwhile.
   */
  let verifying = true;
  let held: WorkerOp[] = [];
  post({ kind: 'ready', refused: store.runsRefused() });
  void verifyInSteps(store, () => closed).then((chain) => {
    if (chain === undefined) return;
    if (!chain.ok) {
      log.error({ chain }, 'audit chain does not verify: run `skills-mcp audit verify`');
      refuseRuns(`chain broken at event ${chain.badEventId}: ${chain.reason}`);
    }
    anchoring = anchor({ ...store, refuseRuns }, settings, log, key, chain);
    if (chain.ok) log.info({ events: chain.events }, 'audit chain verified');
    verifying = false;
    if (held.length === 0) return;
    queue = [...held, ...queue];
    held = [];
    setImmediate(serve);
  });

  const write = (op: WriteOp): unknown => {
    switch (op.m) {
      case 'startSession':
        return store.startSession(op.input, op.sessionId === undefined ? {} : { sessionId: op.sessionId });
      case 'append':
        return store.append(op.input);
      case 'appendMany':
        return store.appendMany(op.inputs);
      case 'appendGroups':
        return op.groups.map((g) => {
          try {
            store.appendMany(g);
            return null;
          } catch (e) {
            return encodeError(e);
          }
        });
      case 'endSession':
        return store.endSession(op.sessionId, op.reason);
    }
  };
  const read = (op: ReadOp): unknown => {
    switch (op.m) {
      case 'sessionState':
        return store.sessionState(op.sessionId);
      case 'sessionEvents':
        return store.sessionEvents(op.sessionId, op.types);
      case 'listCalls':
        return store.listCalls(op.filter);
      case 'getCall':
        return store.getCall(op.callId);
    }
  };
  const attempt = (id: number, fn: () => unknown): WorkerReply => {
    try {
      return { id, ok: true, value: fn() };
    } catch (e) {
      return { id, ok: false, error: encodeError(e) };
    }
  };
  /** Writes in one transaction; if it cannot commit, none of them is durable and each is told so. */
  const writeAll = (ops: WriteOp[], replies: WorkerReply[]) => {
    const first = replies.length;
    try {
      store.withWriteLock(() => {
        for (const op of ops) replies.push(attempt(op.id, () => write(op)));
      });
    } catch (e) {
      const error = encodeError(
        isSkillsError(e)
          ? e
          : new SkillsError('AUDIT_FAILED', `audit write failed: ${(e as Error).message}`, {
              hint: 'Nothing was written by this step. Check the audit DB path, disk space and permissions.',
            }),
      );
      replies.length = first;
      for (const op of ops) replies.push({ id: op.id, ok: false, error });
    }
  };

  /** Sends the answers; one whose value cannot be copied back is answered with an error instead (never lost). */
  const answer = (replies: WorkerReply[]) => {
    try {
      return post({ kind: 'done', replies });
    } catch {
      // fall through: one at a time
    }
    for (const r of replies) {
      try {
        post({ kind: 'done', replies: [r] });
      } catch (e) {
        post({ kind: 'done', replies: [{ id: r.id, ok: false, error: encodeError(e) }] });
      }
    }
  };

  let queue: WorkerOp[] = [];
  let closed = false;
  // A burst of calls leaves this thread's heap grown; it is collected once the server has gone quiet.
  const reclaimer = createMemoryReclaimer({ idleMs: IDLE_MS, log });
  const serve = () => {
    const ops = queue;
    if (ops.length === 0) return;
    queue = [];
    if (held.length > 0) {
      held.push(...ops);
      return;
    }
    reclaimer.busy();
    const replies: WorkerReply[] = [];
    for (let i = 0; i < ops.length;) {
      const op = ops[i]!;
      if (verifying && startsRun(op)) {
        held = ops.slice(i);
        break;
      }
      if (isWrite(op)) {
        let end = i + 1;
        while (end < ops.length && isWrite(ops[end]!) && !(verifying && startsRun(ops[end]!))) end++;
        writeAll(ops.slice(i, end) as WriteOp[], replies);
        i = end;
      } else if (op.m === 'close') {
        replies.push(attempt(op.id, close));
        i++;
      } else {
        replies.push(attempt(op.id, () => read(op)));
        i++;
      }
    }
    answer(replies);
    if (closed) port.close();
    else reclaimer.idle();
  };
  const close = () => {
    if (closed) throw new SkillsError('AUDIT_FAILED', 'the audit log is closed');
    closed = true;
    reclaimer.stop();
    anchoring?.stop();
    store.close();
  };
  port.on('message', (ops: WorkerOp[]) => {
    if (queue.length === 0) setImmediate(serve);
    for (const op of ops) queue.push(op);
  });
}

/** Whether a request writes an event that asks a person or starts a process. */
function startsRun(op: WorkerOp): boolean {
  const inputs =
    op.m === 'append'
      ? [op.input]
      : op.m === 'appendMany'
        ? op.inputs
        : op.m === 'appendGroups'
          ? op.groups.flat()
          : [];
  return inputs.some((ev) => isRunEvent(ev.type));
}

/** Starts anchoring the log; a key or anchor file that cannot be used refuses new runs (read-only tools go on). */
function anchor(
  store: AuditStore,
  settings: WorkerSettings,
  log: Logger,
  key: { key: Buffer; isNew: boolean } | undefined,
  verified: VerifyResult,
): Anchoring | undefined {
  try {
    if (key === undefined) throw new Error('the anchor key could not be loaded');
    return startAnchoring({
      verified,
      store,
      key,
      keyFile: settings.anchors.keyFile,
      file: settings.anchors.file,
      intervalMs: settings.anchors.intervalMs,
      logAnchors: settings.anchors.log,
      log,
    });
  } catch (err) {
    log.error({ err }, 'cannot anchor the audit log');
    store.refuseRuns('the anchor key or file cannot be used');
    return undefined;
  }
}

/** The anchor key (made when missing), or undefined when it cannot be used: then runs are refused, as before. */
function loadWriterKey(path: string, log: Logger): { key: Buffer; isNew: boolean } | undefined {
  const isNew = !existsSync(path);
  try {
    return { key: loadAnchorKey(path, { create: true }), isNew };
  } catch (err) {
    log.error({ err }, 'cannot load the audit anchor key');
    return undefined;
  }
}

function reportRecovery(store: AuditStore, log: Logger): void {
  const r = store.recovery;
  if (r !== null && (r.interruptedCalls.length > 0 || r.closedSessions.length > 0)) {
    log.warn(
      { interrupted: r.interruptedCalls.length, closedSessions: r.closedSessions.length },
      'audit recovery after an unclean stop',
    );
  }
  if (r?.chain?.ok === false)
    log.error({ chain: r.chain }, 'audit chain does not verify: run `skills-mcp audit verify`');
}
