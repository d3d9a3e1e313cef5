import type { Skill } from '../skills/types.js';
import { entryInputOf, type EntryInput } from './entry-input.js';
import type { Runner } from './runner-types.js';

/**
 * A Runner whose implementation (gate, audit, sandbox code) is loaded on the first call that needs it, so serving
 * the catalog starts without it. Only the input schemas of executable skills are needed at start-up, and they
 * come from a small module.
 */
export function createLazyRunner(load: () => Promise<Runner>): Runner {
  const entries = new Map<string, EntryInput>();
  let loaded: Runner | undefined;
  let loading: Promise<Runner> | undefined;
  const get = () =>
    (loading ??= load().then((r) => {
      loaded = r;
      return r;
    }));
  /** Subscribes once the implementation is loaded (loading it); the unsubscribe works before that too. */
  const subscribe = (on: (r: Runner) => () => void) => {
    let off: (() => void) | undefined;
    let cancelled = false;
    void get().then((r) => {
      if (!cancelled) off = on(r);
    });
    return () => {
      cancelled = true;
      off?.();
    };
  };
  return {
    entryInput(skill: Skill) {
      const entry = skill.files.find((f) => f.path === skill.entryPoint);
      const key = `${skill.dir}\0${skill.entryPoint ?? ''}\0${entry?.size ?? ''}`;
      let e = entries.get(key);
      if (e === undefined) entries.set(key, (e = entryInputOf(skill)));
      return e;
    },
    prepareRuns: async (session) => (await get()).prepareRuns(session),
    begin: async (req, ctx) => (await get()).begin(req, ctx),
    resume: async (callId, session, answer, ctx, retry) =>
      (await get()).resume(callId, session, answer, ctx, retry),
    abandon: async (callId, session) => (await get()).abandon(callId, session),
    recordAnswer: async (callId, session, answer, channel) =>
      (await get()).recordAnswer(callId, session, answer, channel),
    onPendingClosed: (listener) => subscribe((r) => r.onPendingClosed(listener)),
    recordSharedAnswer: async (callId, seen, answer) =>
      (await get()).recordSharedAnswer(callId, seen, answer),
    onDecidedElsewhere: (listener) => subscribe((r) => r.onDecidedElsewhere(listener)),
    // Not loaded yet: neither is the log, so the answer waits for the record.
    recordReadOnly: (session, tool, skill, input, ok) =>
      loaded !== undefined
        ? loaded.recordReadOnly(session, tool, skill, input, ok)
        : get().then((r) => r.recordReadOnly(session, tool, skill, input, ok)),
    pendingView: (callId) => loaded?.pendingView(callId),
    artifact: (session, callId, path) => loaded?.artifact(session, callId, path),
    // Nothing to end or close unless the implementation was (being) loaded: no call, no audit session.
    endSession: async (session, reason) => {
      if (loading !== undefined) await (await loading).endSession(session, reason);
    },
    close: async () => {
      if (loading !== undefined) await (await loading).close();
    },
  };
}
