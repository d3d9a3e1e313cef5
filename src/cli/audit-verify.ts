import { existsSync } from 'node:fs';
import { readAnchorLines } from '../audit/anchor-file.js';
import { loadAnchorKey } from '../audit/anchor-key.js';
import type { AuditStore } from '../audit/audit-store.js';
import { checkAnchors, type AnchorCheck } from '../audit/check-anchors.js';
import { ANCHOR_FIX } from '../audit/start-anchoring.js';
import { isSkillsError } from '../errors.js';
import type { VerifyResult } from '../audit/types.js';
import type { CliIo, ExitCode } from './io.js';

export interface AnchorPaths {
  file: string;
  keyFile: string;
}

export type AnchorReport = AnchorCheck | { status: 'none' | 'unchecked'; reason: string };

const show = (v: unknown) => (v === undefined ? '(no row)' : JSON.stringify(v));
// Row keys and values come from the database, which whoever tampered with it wrote: no terminal control reaches
// the screen (JSON.stringify leaves DEL, C1 controls and line/paragraph separators as they are).
// eslint-disable-next-line no-control-regex -- control characters are exactly what this must catch
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u2028\u2029]/g;
/** Text from the database made safe for a terminal: control characters as `\\uXXXX`. */
export const printable = (text: string) =>
  text.replace(CONTROL, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
const iso = (ts: number) => new Date(ts).toISOString();

/**
 * `audit verify`: the database file (SQLite's quick_check: an index that lies about its table), the hash chain, the signed anchors kept outside the database (truncation, rewrites, re-hashing up
 * to the last anchor, lines deleted from the anchor file, a missing or emptied anchor file), and the summary tables
 * rebuilt from the events. Exit 0 only when all four hold; a log that was never anchored (no key, no anchor file,
 * no copy in the database) passes with a warning.
 */
export function auditVerify(store: AuditStore, io: CliIo, json: boolean, paths: AnchorPaths): ExitCode {
  const chain = store.verify();
  const anchors = checkAnchorsAt(store, chain.events, paths);
  let summary;
  try {
    summary = store.compareProjections();
  } catch (e) {
    summary = [
      { table: 'calls' as const, key: '-', stored: 'unreadable events', rebuilt: (e as Error).message },
    ];
  }
  let damage;
  try {
    damage = store.checkFile();
  } catch (e) {
    damage = [(e as Error).message];
  }
  const ok =
    chain.ok &&
    (anchors.status === 'ok' || anchors.status === 'none') &&
    summary.length === 0 &&
    damage.length === 0;
  if (json) {
    io.out(
      `${JSON.stringify(
        { ok, database: damage, chain, anchors: { file: paths.file, ...anchors }, summary },
        null,
        2,
      )
        .split('\n')
        .map(printable)
        .join('\n')}\n`,
    );
    return ok ? 0 : 1;
  }
  const out: string[] = [describeChain(chain)];
  out.push(...describeAnchors(anchors, chain.events, paths.file));
  if (summary.length === 0) out.push('summary tables: ok, they match the events');
  else {
    out.push(
      `summary tables: ${summary.length} DIFFERENCE${summary.length === 1 ? '' : 'S'} from the events`,
    );
    for (const d of summary) {
      out.push(
        d.column === undefined
          ? `  ${d.table} ${d.key}: stored ${show(d.stored)}, events give ${show(d.rebuilt)}`
          : `  ${d.table} ${d.key} ${d.column}: stored ${show(d.stored)}, events give ${show(d.rebuilt)}`,
      );
    }
  }
  out.push(
    damage.length === 0
      ? 'database: ok, its tables and indexes agree'
      : `database: DAMAGED (SQLite quick_check): ${damage.join('; ')}`,
  );
  (ok ? io.out : io.err)(
    `${out.map(printable).join('\n')}\n${ok ? 'ok' : 'FAILED: the audit log does not verify'}\n`,
  );
  return ok ? 0 : 1;
}

/** The verdict line on a hash chain. */
export const describeChain = (chain: VerifyResult): string =>
  chain.ok
    ? `chain: ok, ${chain.events} events${chain.head === null ? '' : `, head ${chain.head}`}`
    : `chain: BROKEN at event ${chain.badEventId} (${chain.reason}): ${chain.detail}; the ${chain.events} events before it verify`;

/** What the anchor check needs of a log: its newest anchor copy, and the hash of one event. */
export interface AnchoredLog {
  lastAnchor(): string | undefined;
  hashAt(eventId: number): string | undefined;
}

/** Checks the anchor file (and the log's copy of the newest anchor) at `paths` against a log of `events` events. */
export function checkAnchorsAt(log: AnchoredLog, events: number, paths: AnchorPaths): AnchorReport {
  const lines = readAnchorLines(paths.file);
  const copy = log.lastAnchor();
  if (!existsSync(paths.keyFile)) {
    return lines === undefined && copy === undefined
      ? { status: 'none', reason: `no anchor key at ${paths.keyFile} and no anchor file` }
      : { status: 'unchecked', reason: `no anchor key at ${paths.keyFile}` };
  }
  try {
    const key = loadAnchorKey(paths.keyFile, { create: false });
    return checkAnchors({ lines, copy }, key, { events, hashAt: (id) => log.hashAt(id) });
  } catch (e) {
    return { status: 'unchecked', reason: isSkillsError(e) ? e.message : String(e) };
  }
}

/** The lines `audit verify` prints about the anchors. */
export function describeAnchors(a: AnchorReport, events: number, file: string): string[] {
  switch (a.status) {
    case 'none':
      return [
        `anchors: none (${a.reason}): truncation and a re-hashed rewrite cannot be ruled out (warning)`,
      ];
    case 'unchecked':
      return [`anchors: NOT CHECKED: ${a.reason}`];
    case 'tampered':
      return [
        `anchors: TAMPERING DETECTED (${a.matched} anchors match, ${file})`,
        ...a.problems.map((p) => `  ${p.line === undefined ? '' : `line ${p.line} `}${p.kind}: ${p.detail}`),
        `  fix: ${ANCHOR_FIX}`,
      ];
  }
  const out = [`anchors: ok, ${a.matched} match ${file}`];
  const l = a.latest;
  if (l !== undefined) {
    out[0] +=
      l.events === 0
        ? `; the log was empty as of ${iso(l.ts)} (anchor #${l.seq})`
        : `; events 1-${l.events} are vouched for as of ${iso(l.ts)} (anchor #${l.seq})`;
    if (events > l.events)
      out.push(
        `  events ${l.events + 1}-${events} came after the newest anchor: only the chain vouches for them`,
      );
  }
  if (a.reanchored !== undefined)
    out.push(
      `  re-anchored by an operator at ${iso(a.reanchored.ts)} (anchor #${a.reanchored.seq}): ` +
        `the ${a.reanchored.events} events before it are vouched for only as they stood then`,
    );
  return out;
}
