import { randomUUID } from 'node:crypto';
import { finishedEvent } from './call-events.js';
import { withCaller } from './caller-record.js';
import type { LiveSessions } from './live-sessions.js';
import type { RunnerDeps } from './runner-types.js';
import { safeSummary } from './safe-summary.js';
import type { SessionInfo } from './session.js';

export interface ReadOnlyRecords {
  record: (info: SessionInfo, tool: string, skill: string | null, input: unknown, ok: boolean) => void;
  /** Writes what is waiting now; resolves when every record of the session so far is durable. */
  settled(sessionId: string): Promise<void>;
}

/**
 * How long a read-only call's record may wait for others to share its commit. Each commit is an fsync that holds
 * the event loop (about a millisecond on a VM disk): one per call would roughly double a warm call's latency when
 * calls follow one another.
 */
export const READ_ONLY_BATCH_MS = 10;

interface Waiting {
  tool: string;
  skill: string | null;
  input: unknown;
  ok: boolean;
  live: ReturnType<LiveSessions['get']>;
  written: () => void;
}

/**
 * Read-only calls run no code, so their record need not precede the answer: it is written after it, off the
 * answer's path (the input's summary too). Records of the calls made within {@link READ_ONLY_BATCH_MS} of each
 * other share one transaction and one fsync. The session is claimed and the write tracked at once, so ending the
 * session right after writes the waiting records first.
 */
export function createReadOnlyRecords(
  deps: Pick<RunnerDeps, 'audit' | 'log'>,
  sessions: LiveSessions,
): ReadOnlyRecords {
  const inFlight = new Map<string, Set<Promise<void>>>();
  let waiting: Waiting[] = [];
  let timer: NodeJS.Timeout | undefined;

  const write = (w: Waiting) =>
    Promise.all([deps.audit(), w.live])
      .then(async ([audit, s]) => {
        const callId = randomUUID();
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
        // Group commit: both events, and those of every record written in the same turn, share one transaction.
        await Promise.all([
          audit.appendAsync({ type: 'tool_call_requested', sessionId: s.auditId, callId, payload }),
          audit.appendAsync(finishedEvent(s.auditId, callId, w.ok ? 'ok' : 'error')),
        ]);
      })
      .catch((err: unknown) => deps.log.error({ err, tool: w.tool }, 'could not audit a read-only call'))
      .finally(w.written);

  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    const batch = waiting;
    waiting = [];
    for (const w of batch) void write(w);
  };

  const record = (info: SessionInfo, tool: string, skill: string | null, input: unknown, ok: boolean) => {
    let writes = inFlight.get(info.id);
    if (writes === undefined) inFlight.set(info.id, (writes = new Set()));
    const tracked = writes;
    const done = new Promise<void>((resolve) =>
      waiting.push({ tool, skill, input, ok, live: sessions.get(info), written: resolve }),
    ).finally(() => {
      tracked.delete(done);
      if (tracked.size === 0) inFlight.delete(info.id);
    });
    tracked.add(done);
    timer ??= setTimeout(flush, READ_ONLY_BATCH_MS);
  };

  const settled = async (sessionId: string) => {
    const writes = inFlight.get(sessionId);
    if (writes === undefined) return;
    flush();
    await Promise.all([...writes]);
  };
  return { record, settled };
}
