import { SkillsError } from '../errors.js';
import { appendAnchor, createAnchorFile, readAnchorLines, setAnchorFileAside } from './anchor-file.js';
import { loadAnchorKey } from './anchor-key.js';
import { type AnchorRecord, readSignedAnchor, signAnchor } from './anchor-record.js';
import type { AuditStore } from './audit-store.js';
import { checkAnchors } from './check-anchors.js';
import { GENESIS_HASH } from './event-hash.js';

export interface ReanchorOptions {
  store: AuditStore;
  keyFile: string;
  file: string;
  now?: () => number;
}

export type ReanchorResult = { done: false } | { done: true; record: AnchorRecord; setAside?: string };

/**
 * The operator's way out when the anchors no longer match (a lost or damaged anchor file, a log restored from a
 * backup): accepts the log as it stands. Under the write lock, it sets the old anchor file aside (renamed, kept),
 * starts a new one with a signed anchor marked `reanchored` that continues the numbering, and records its copy in
 * the database. `audit verify` names it from then on. Does nothing when the anchors already verify; refuses a log
 * whose chain itself is broken (no anchor can vouch for it).
 */
export function reanchorLog(o: ReanchorOptions): ReanchorResult {
  const { store, file } = o;
  const now = o.now ?? Date.now;
  return store.withWriteLock((): ReanchorResult => {
    const chain = store.verify();
    if (!chain.ok)
      throw new SkillsError(
        'AUDIT_CHAIN_BROKEN',
        `the chain is broken at event ${chain.badEventId} (${chain.reason}): no anchor can vouch for it`,
        { hint: 'Restore the audit log from a backup, or move it aside to start a new one.' },
      );
    const key = loadAnchorKey(o.keyFile, { create: true });
    const lines = readAnchorLines(file);
    const copy = store.lastAnchor();
    const check = checkAnchors({ lines, copy }, key, {
      events: chain.events,
      hashAt: (id) => store.hashAt(id),
    });
    if (check.status === 'ok' && (lines?.length ?? 0) > 0) return { done: false };
    let seq = 0;
    for (const text of lines ?? []) seq = Math.max(seq, readSignedAnchor(key, text)?.seq ?? 0);
    seq = Math.max(seq, readSignedAnchor(key, copy, 'copy')?.seq ?? 0);
    const ts = now();
    const setAside = (lines?.length ?? 0) > 0 ? setAnchorFileAside(file, ts) : undefined;
    const unsigned = {
      v: 2 as const,
      seq: seq + 1,
      ts,
      events: chain.events,
      head: chain.head ?? GENESIS_HASH,
      first: store.hashAt(1) ?? GENESIS_HASH,
      reanchored: true as const,
      // What the operator accepts is vouched for by this anchor; what comes after, by writer marks only.
      marks_from: chain.events + 1,
    };
    store.setLastAnchor(JSON.stringify(signAnchor(key, unsigned, 'copy')));
    const record = signAnchor(key, unsigned);
    createAnchorFile(file);
    appendAnchor(file, record);
    return { done: true, record, ...(setAside === undefined ? {} : { setAside }) };
  });
}
