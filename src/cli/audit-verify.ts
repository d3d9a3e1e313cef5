import { existsSync } from 'node:fs';
import { readAnchorLines } from '../audit/anchor-file.js';
import { loadAnchorKey } from '../audit/anchor-key.js';
import type { AuditStore } from '../audit/audit-store.js';
import { checkAnchors, type AnchorCheck } from '../audit/check-anchors.js';
import { checkVouched, type VouchedCheck } from '../audit/check-vouched.js';
import { readLogEvidence, type LogEvidence } from '../audit/read-log-evidence.js';
import { ANCHOR_FIX } from '../audit/start-anchoring.js';
import { isSkillsError } from '../errors.js';
import type { VerifyResult } from '../audit/types.js';
import type { CliIo, ExitCode } from './io.js';
import { collectPasskeyRecords } from '../passkeys/passkey-records.js';
import { verifyPasskeyApprovals, type PasskeyCheck } from '../passkeys/verify-passkey-approvals.js';
import { judgeRetention } from './judge-retention.js';

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
 * `audit verify`: the database file (SQLite's quick_check: an index that lies about its table), the hash chain, the
 * signed anchors kept outside the database (truncation, rewrites, re-hashing up to the last anchor, lines deleted
 * from the anchor file, a missing or emptied anchor file), who wrote each event (an event no holder of the anchor key
 * vouches for fails, however well it links), and the summary tables rebuilt from the events. All of it is read from
 * one snapshot, so a log being written verifies as it stood (`readLogEvidence`). Exit 0 only when all of it holds; a
 * log that was never anchored (no key, no anchor file, no copy, no marks in the database) passes with a warning. A
 * pruned log verifies from its newest checkpoint, which must be signed (`judgeRetention`), as must an archive given.
 * Every passkey approval is checked offline against the passkeys enrolled in the log (`verifyPasskeyApprovals`).
 */
export async function auditVerify(
  store: AuditStore,
  io: CliIo,
  json: boolean,
  paths: AnchorPaths,
  archiveFile?: string,
): Promise<ExitCode> {
  const records = collectPasskeyRecords();
  const e = readLogEvidence(store, paths.file, records.add);
  const passkeys = await verifyPasskeyApprovals(records.done());
  const { chain, summary, damage } = e;
  const { anchors, writers } = judgeAnchors(e, paths);
  const retention = judgeRetention(e.checkpoints, paths.keyFile, archiveFile);
  const ok =
    chain.ok &&
    retention.ok &&
    (anchors.status === 'ok' || anchors.status === 'none') &&
    (writers === undefined || (writers.unvouchedCount === 0 && writers.badMarks === 0)) &&
    summary.length === 0 &&
    damage.length === 0 &&
    passkeys.failures.length === 0;
  if (json) {
    const report = {
      ok,
      database: damage,
      chain: { ...chain, total: e.total },
      anchors: { file: paths.file, ...anchors },
      ...(writers === undefined ? {} : { writers }),
      ...(retention.archived === 0 && retention.archive === undefined
        ? {}
        : { retention: { ...retention, lines: undefined } }),
      summary,
      passkeys,
    };
    io.out(`${JSON.stringify(report, null, 2).split('\n').map(printable).join('\n')}\n`);
    return ok ? 0 : 1;
  }
  const out: string[] = [describeChain(chain, e.total), ...retention.lines];
  out.push(...describeAnchors(anchors, e.total, paths.file));
  if (writers !== undefined) out.push(...describeWriters(writers));
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
  out.push(...describePasskeys(passkeys));
  out.push(
    damage.length === 0
      ? 'database: ok, its tables, indexes and guard triggers agree'
      : `database: DAMAGED (SQLite quick_check, guard triggers): ${damage.join('; ')}`,
  );
  (ok ? io.out : io.err)(
    `${out.map(printable).join('\n')}\n${ok ? 'ok' : 'FAILED: the audit log does not verify'}\n`,
  );
  return ok ? 0 : 1;
}

/** The lines `audit verify` prints about the passkey approvals. */
export function describePasskeys(p: PasskeyCheck): string[] {
  const n = (k: number, what: string) => `${k} ${what}${k === 1 ? '' : 's'}`;
  const of = `${n(p.checked, 'passkey approval')} checked against ${n(p.enrolled, 'passkey')} enrolled in the log`;
  if (p.failures.length === 0) return [`passkeys: ok, ${of}`];
  return [
    `passkeys: ${p.failures.length} FAILED (${of})`,
    ...p.failures.map((f) => `  call ${f.callId ?? '-'} (event ${f.eventId}): ${f.reason}`),
  ];
}

/** The anchors checked against the snapshot, and, when they hold, who vouches for each event. */
function judgeAnchors(e: LogEvidence, paths: AnchorPaths): { anchors: AnchorReport; writers?: VouchedCheck } {
  const { lines, copy } = e.anchors;
  if (!existsSync(paths.keyFile)) {
    return {
      anchors:
        lines === undefined && copy === undefined && e.marks.length === 0
          ? { status: 'none', reason: `no anchor key at ${paths.keyFile} and no anchor file` }
          : { status: 'unchecked', reason: `no anchor key at ${paths.keyFile}` },
    };
  }
  let key: Buffer;
  try {
    key = loadAnchorKey(paths.keyFile, { create: false });
  } catch (err) {
    return { anchors: { status: 'unchecked', reason: isSkillsError(err) ? err.message : String(err) } };
  }
  const anchors = checkAnchors(e.anchors, key, e.view);
  return anchors.status === 'ok'
    ? { anchors, writers: checkVouched(anchors, e.marks, key, e.view) }
    : { anchors };
}

const span = ([a, b]: [number, number]) => (a === b ? `${a}` : `${a}-${b}`);

/** The lines `audit verify` prints about who wrote the events. */
export function describeWriters(w: VouchedCheck): string[] {
  const by = [
    ...(w.byAnchors > 0 ? [`events 1-${w.byAnchors} by the anchors`] : []),
    ...(w.byMarks > 0 ? [`${w.byMarks} by writer marks`] : []),
  ];
  if (w.unvouchedCount === 0 && w.badMarks === 0)
    return [`writers: ok, every event is vouched for${by.length === 0 ? '' : ` (${by.join(', ')})`}`];
  const out: string[] = [];
  if (w.unvouchedCount > 0) {
    const more = w.unvouchedCount > 0 && w.unvouched.length === 20 ? ', …' : '';
    out.push(
      `writers: ${w.unvouchedCount} event${w.unvouchedCount === 1 ? '' : 's'} NOT VOUCHED FOR: ` +
        `${w.unvouched.map(span).join(', ')}${more}`,
      '  no holder of the anchor key wrote them (no writer mark): someone who can write the database appended ' +
        'them; that they link to the chain does not make them the server’s',
    );
  }
  if (w.badMarks > 0)
    out.push(
      `writers: ${w.badMarks} writer mark${w.badMarks === 1 ? '' : 's'} NOT SIGNED with this key for the events they name`,
    );
  return out;
}

/** The verdict line on a hash chain. */
export const describeChain = (chain: VerifyResult, total?: number): string =>
  chain.ok
    ? `chain: ok, ${chain.events} events${chain.head === null ? '' : `, head ${chain.head}`}`
    : `chain: BROKEN at event ${chain.badEventId} (${chain.reason}): ${chain.detail}; ` +
      `the ${chain.events} events before it verify${total === undefined ? '' : ` (the log holds ${total})`}`;

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
        `  events ${l.events + 1}-${events} came after the newest anchor: a cut of them would not show yet`,
      );
  }
  if (a.reanchored !== undefined)
    out.push(
      `  re-anchored by an operator at ${iso(a.reanchored.ts)} (anchor #${a.reanchored.seq}): ` +
        `the ${a.reanchored.events} events before it are vouched for only as they stood then`,
    );
  return out;
}
