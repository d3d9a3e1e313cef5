import { newCallId } from '../audit/call-id.js';
import type { CallLog } from '../audit/call-log.js';
import type { AppendInput } from '../audit/types.js';
import { finishedEvent } from './call-events.js';
import { withCaller } from './caller-record.js';
import type { LiveSession, LiveSessions } from './live-sessions.js';
import type { RunnerDeps } from './runner-types.js';
import { safeSummary } from './safe-summary.js';
import type { SessionInfo } from './session.js';

export interface ReadOnlyRecords {
  /**
   * Records a read-only call. Undefined once the log has opened: the record follows the answer. Before (the first
   * calls of a start), a promise that settles once the record is durable (or logged as lost): the answer waits for
   * it, so that a crash just after the first answers cannot lose their records.
   */
  record: (
    info: SessionInfo,
    tool: string,
    skill: string | null,
    input: unknown,
    ok: boolean,
  ) => Promise<void> | undefined;
  /** Writes what is waiting now; resolves when every record of the session so far is durable. */
  settled(sessionId: string): Promise<void>;
}

/**
 * How long a read-only call's record may wait for others to share its commit (and, with the worker-written SQLite
 * log, its message to the writer thread): one per call would cost every call a commit, or a round trip between
 * threads, when calls follow one another.
 */
export const READ_ONLY_BATCH_MS = 10;

/** How long after a logged lost record the next ones are only counted. */
const FAILURE_LOG_MS = 10_000;

interface Waiting {
  info: SessionInfo;
  tool: string;
  skill: string | null;
  input: unknown;
  ok: boolean;
  live: ReturnType<LiveSessions['get']>;
}

/**
 * Read-only calls run no code, so their record need not precede the answer: it is written after it, off the
 * answer's path (the input's summary too). Records of the calls made within {@link READ_ONLY_BATCH_MS} of each
 * other share one transaction and one fsync. Ending a session writes its waiting records first.
 */
export function createReadOnlyRecords(
  deps: Pick<RunnerDeps, 'audit' | 'log'>,
  sessions: LiveSessions,
): ReadOnlyRecords {
  /** Per session, the batches holding its records that are not durable yet (each settles, never rejects). */
  const inFlight = new Map<string, Set<Promise<void>>>();
  let waiting: Waiting[] = [];
  let timer: NodeJS.Timeout | undefined;
  /** Whether the log has opened (answered once); until then answers wait for their batch (`batchDone`). */
  let opened = false;
  let batchDone: { promise: Promise<void>; resolve: () => void } | undefined;

  // Logged once per window with how many were lost since: a database out of reach under load would otherwise
  // cost a line per call.
  let quietUntil = 0;
  let lost = 0;
  const failed = (w: Waiting, err: unknown) => {
    lost++;
    if (performance.now() < quietUntil) return;
    deps.log.error({ err, tool: w.tool, unaudited: lost }, 'could not audit a read-only call');
    lost = 0;
    quietUntil = performance.now() + FAILURE_LOG_MS;
  };

  /** Both events of a call, for one transaction. */
  const eventsOf = (w: Waiting, s: LiveSession): AppendInput[] => {
    const callId = newCallId();
    const payload = {
      tool: w.tool,
      skill: w.skill,
      ...safeSummary(w.input),
      bundle_sha256: null,
      approval_key: null,
      valid: true,
      read_only: true,
      ...withCaller(s.caller),
    };
    return [
      { type: 'tool_call_requested', sessionId: s.auditId, callId, payload },
      finishedEvent(s.auditId, callId, w.ok ? 'ok' : 'error'),
    ];
  };

  /** A log that writes groups (the worker-written SQLite log): the whole batch in one request, nothing sent back. */
  const writeGroups = async (audit: CallLog & Required<Pick<CallLog, 'appendGroups'>>, batch: Waiting[]) => {
    const lives = await Promise.allSettled(batch.map((w) => w.live));
    const owners: Waiting[] = [];
    const groups: AppendInput[][] = [];
    lives.forEach((l, i) => {
      const w = batch[i]!;
      if (l.status === 'rejected') return failed(w, l.reason);
      owners.push(w);
      groups.push(eventsOf(w, l.value));
    });
    if (groups.length === 0) return;
    try {
      const errors = await audit.appendGroups(groups);
      errors.forEach((err, i) => err !== undefined && failed(owners[i]!, err));
    } catch (err) {
      for (const w of owners) failed(w, err);
    }
  };

  /** Any other log: both events in one transaction, all or nothing. */
  const writeOne = (audit: CallLog, w: Waiting) =>
    w.live
      .then(async (s) => {
        await audit.appendMany(eventsOf(w, s));
      })
      .catch((err: unknown) => failed(w, err));

  /** Settles once every record of the batch is durable or logged as lost; never rejects. */
  const write = async (batch: Waiting[]): Promise<void> => {
    let audit: CallLog;
    try {
      audit = await deps.audit();
      opened = true;
    } catch (err) {
      for (const w of batch) failed(w, err);
      return;
    }
    if (audit.appendGroups !== undefined)
      return writeGroups(audit as Parameters<typeof writeGroups>[0], batch);
    await Promise.all(batch.map((w) => writeOne(audit, w)));
  };

  const track = (sessionId: string, written: Promise<void>) => {
    let batches = inFlight.get(sessionId);
    if (batches === undefined) inFlight.set(sessionId, (batches = new Set()));
    const mine = batches;
    mine.add(written);
    void written.then(() => {
      mine.delete(written);
      if (mine.size === 0 && inFlight.get(sessionId) === mine) inFlight.delete(sessionId);
    });
  };

  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const batch = waiting;
    const done = batchDone;
    waiting = [];
    batchDone = undefined;
    if (batch.length === 0) return done?.resolve();
    const written = write(batch);
    if (done !== undefined) void written.then(done.resolve);
    for (const id of new Set(batch.map((w) => w.info.id))) track(id, written);
  };

  const record = (info: SessionInfo, tool: string, skill: string | null, input: unknown, ok: boolean) => {
    waiting.push({ info, tool, skill, input, ok, live: sessions.get(info) });
    timer ??= setTimeout(flush, READ_ONLY_BATCH_MS);
    if (opened) return undefined;
    if (batchDone === undefined) {
      let resolve = () => undefined as void;
      const promise = new Promise<void>((r) => (resolve = r));
      batchDone = { promise, resolve };
    }
    return batchDone.promise;
  };

  const settled = async (sessionId: string) => {
    if (waiting.some((w) => w.info.id === sessionId)) flush();
    const batches = inFlight.get(sessionId);
    if (batches !== undefined) await Promise.all([...batches]);
  };
  return { record, settled };
}
