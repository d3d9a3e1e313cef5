import { existsSync } from 'node:fs';
import type { Logger } from '../log.js';
import { appendAnchor, createAnchorFile, readAnchorLines, readLastAnchorLine } from './anchor-file.js';
import { loadAnchorKey } from './anchor-key.js';
import { readSignedAnchor, sameAnchor, signAnchor } from './anchor-record.js';
import type { AuditStore } from './audit-store.js';
import { checkAnchors } from './check-anchors.js';
import { GENESIS_HASH } from './event-hash.js';
import type { VerifyResult } from './types.js';
import type { ChainPoint } from './verify-chain.js';

export interface AnchoringOptions {
  store: AuditStore;
  /** The signing key (see `loadAnchorKey`); made when missing, together with an empty anchor file. */
  keyFile: string;
  /** The key, when the caller loaded it already (to open the store with it): `isNew` when it was just made. */
  key?: { key: Buffer; isNew: boolean };
  /** The anchor file (JSON lines, append-only). */
  file: string;
  /** How often the new part of the chain is verified and anchored. */
  intervalMs: number;
  /** Also write each anchor to the log stream (a copy the database's owner may not be able to edit). */
  logAnchors: boolean;
  log: Logger;
  now?: () => number;
  /** The chain check already made (e.g. by the writer thread, in steps, after opening); else done here. */
  verified?: VerifyResult;
}

export interface Anchoring {
  /** Verifies what was appended since the last check and, when the chain grew, writes an anchor. */
  anchorNow(): void;
  /** Writes a last anchor and stops the timer. Idempotent. */
  stop(): void;
}

/** What the operator can do when the anchors do not match: logged with the refusal. */
export const ANCHOR_FIX =
  'restore the anchor file (and the audit log) from a backup; or, to accept the log as it stands, run ' +
  '`skills-mcp audit reanchor --i-understand` (it records that you did)';

/**
 * Keeps the audit log provable from outside. At start, under the database's write lock: loads the key (a new key
 * comes with a new, empty anchor file) and checks every anchor and the database's copy of the newest one against
 * the chain: an anchor file that is missing or empty while the log holds events, cut to an earlier line, or not
 * matching, refuses new runs. Then periodically (and at `stop`) it verifies the events appended since the last check,
 * checks that the file still ends with the anchor the database recorded, and writes a signed anchor to the file and
 * its copy to the database, in one transaction. Any failure makes the store refuse new runs.
 *
 * An anchor goes up to this server's own last event (`store.ownHead()`), never further: events another writer
 * appended after it are not signed by us. With replicas sharing the log each anchors its own appends; which events a
 * key holder wrote is in the writer marks (`writer-mark.ts`), and every anchor names the event from which only marks
 * vouch (`marks_from`: the first event after the anchors that came before marks, or 1 for a new log).
 */
export function startAnchoring(o: AnchoringOptions): Anchoring {
  const { store, log, file } = o;
  const now = o.now ?? Date.now;
  const hashAt = (id: number) => store.hashAt(id);
  let point: ChainPoint | undefined;
  let marksFrom = 1;
  const refuse = (reason: string, problems: unknown) => {
    log.error({ file, keyFile: o.keyFile, problems, fix: ANCHOR_FIX }, 'audit anchors do not match the log');
    store.refuseRuns(reason);
  };
  const advance = (): boolean => {
    const r = store.verify(point);
    if (!r.ok) {
      store.refuseRuns(`chain broken at event ${r.badEventId}: ${r.reason}`);
      point = undefined;
      return false;
    }
    point = { eventId: r.events, hash: r.head ?? GENESIS_HASH };
    return true;
  };

  const opened = o.verified ?? store.recovery?.chain ?? store.verify();
  if (opened.ok) point = { eventId: opened.events, hash: opened.head ?? GENESIS_HASH };
  else store.refuseRuns(`chain broken at event ${opened.badEventId}: ${opened.reason}`);
  const key = store.withWriteLock(() => {
    const keyIsNew = o.key?.isNew ?? !existsSync(o.keyFile);
    const k = o.key?.key ?? loadAnchorKey(o.keyFile, { create: true });
    const lines = readAnchorLines(file);
    if (keyIsNew) createAnchorFile(file);
    if (point === undefined || !advance()) return k;
    const copy = store.lastAnchor();
    if (keyIsNew && lines === undefined && copy === undefined) {
      // Nothing to compare with: what the log holds now is accepted, as the first anchor will say.
      if (point.eventId > 0) log.warn({ file }, 'no audit anchors yet: the log is vouched for from now on');
      marksFrom = point.eventId + 1;
      return k;
    }
    const check = checkAnchors({ lines, copy }, k, { events: point.eventId, hashAt });
    // Anchors from before writer marks vouch for what they cover; after that, only marks do.
    marksFrom = check.marksFrom ?? check.covered + 1;
    const first = check.problems[0];
    if (first !== undefined)
      refuse(
        `${first.line === undefined ? 'anchors' : `anchor line ${first.line}`}: ${first.detail}`,
        check.problems,
      );
    return k;
  });

  /** The anchor file cannot be read or written (a folder in its place, a full disk): anchoring stops, so do runs. */
  const onFile = <T>(what: string, io: () => T): T => {
    try {
      return io();
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
      refuse(`cannot ${what} the anchor file (${code}): the log is no longer anchored`, { file, err });
      throw err;
    }
  };

  const anchorNow = () => {
    if (point === undefined || store.runsRefused() !== undefined) return;
    const record = store.withWriteLock(() => {
      if (!advance()) return undefined;
      const copy = readSignedAnchor(key, store.lastAnchor(), 'copy');
      const lastLine = onFile('read', () => readLastAnchorLine(file));
      const last = readSignedAnchor(key, lastLine);
      if ((lastLine ?? '') !== '' && last === undefined) {
        refuse('the anchor file no longer ends with a signed anchor', { file });
        return undefined;
      }
      if (
        copy !== undefined &&
        (last === undefined || last.seq < copy.seq || (last.seq === copy.seq && !sameAnchor(last, copy)))
      ) {
        refuse(`the anchor file lost anchor #${copy.seq} while serving`, {
          file,
          expected: copy.seq,
          found: last?.seq,
        });
        return undefined;
      }
      const own = store.ownHead();
      // The very first anchor states what the log held before marks began (nothing, for a new log).
      const p =
        last === undefined && copy === undefined && (own === undefined || own.eventId < marksFrom - 1)
          ? { eventId: marksFrom - 1, hash: store.hashAt(marksFrom - 1) ?? GENESIS_HASH }
          : own;
      if (p === undefined || (last !== undefined && last.events >= p.eventId)) return undefined;
      const unsigned = {
        v: 2 as const,
        seq: Math.max(last?.seq ?? 0, copy?.seq ?? 0) + 1,
        ts: now(),
        events: p.eventId,
        head: p.hash,
        first: store.hashAt(1) ?? GENESIS_HASH,
        marks_from: marksFrom,
      };
      // The copy first: if the append fails the transaction rolls back; if the commit fails after it, the file is
      // one anchor ahead of the copy, which the check allows.
      store.setLastAnchor(JSON.stringify(signAnchor(key, unsigned, 'copy')));
      const next = signAnchor(key, unsigned);
      onFile('append to', () => appendAnchor(file, next));
      return next;
    });
    if (record !== undefined && o.logAnchors) log.info({ anchor: record }, 'audit anchor');
  };

  const safely = () => {
    try {
      anchorNow();
    } catch (err) {
      log.error({ err }, 'could not anchor the audit log');
    }
  };
  safely();
  const timer = setInterval(safely, o.intervalMs);
  timer.unref();
  let stopped = false;
  return {
    anchorNow,
    stop() {
      if (stopped) return;
      stopped = true;
      clearInterval(timer);
      safely();
    },
  };
}
