import { createHash } from 'node:crypto';
import { closeSync, fstatSync, fsyncSync, openSync, readSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';
import { canonicalJson } from '../canonical-json.js';
import { SkillsError } from '../errors.js';
import { isAnchorSigned, parseAnchor } from './anchor-record.js';
import { createChainWalker } from './create-chain-walker.js';
import { isMarkSigned, type WriterMark } from './writer-mark.js';

/** The last line of an archive: what it holds, so a reader can tell a whole archive from a cut one. */
export interface ArchiveSummary {
  record: 'archive_summary';
  /** The first and last event archived. */
  first: number;
  last: number;
  /** `prev_hash` of the first event: the genesis hash, or the previous checkpoint's hash. */
  prev_hash: string;
  /** The hash of the last event: the checkpoint's. */
  last_hash: string;
  events: number;
  sessions: number;
  anchors: number;
  writer_marks: number;
  /** The checkpoint this archive becomes, once pruned. */
  checkpoint: number;
}

export interface ArchiveCheck {
  problems: string[];
  summary?: ArchiveSummary;
  sha256: string;
  /** Marks and anchors checked with the key (none without it). */
  signed: { marks: number; anchors: number } | undefined;
}

/** Archives larger than this are refused on reading (a bound on what a file anyone could have written costs). */
export const MAX_ARCHIVE_BYTES = 4 * 1024 ** 3;
const MAX_PROBLEMS = 20;

/** Writes `lines` to a new file (never over an existing one, 0600), fsynced with its folder. */
export function writeArchiveFile(path: string, lines: Iterable<string>): void {
  const fd = openSync(path, 'wx', 0o600);
  try {
    for (const line of lines) writeSync(fd, `${line}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  const dir = openSync(dirname(path), 'r');
  try {
    fsyncSync(dir);
  } finally {
    closeSync(dir);
  }
}

/** The archive's bytes (bounded), or AUDIT_FAILED. */
export function readArchiveFile(path: string): Buffer {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (cause) {
    throw new SkillsError('AUDIT_FAILED', `cannot read the archive ${path}`, { cause });
  }
  try {
    const size = fstatSync(fd).size;
    if (size > MAX_ARCHIVE_BYTES)
      throw new SkillsError('AUDIT_FAILED', `the archive ${path} is larger than ${MAX_ARCHIVE_BYTES} bytes`);
    const buf = Buffer.alloc(size);
    let at = 0;
    while (at < size) {
      const n = readSync(fd, buf, at, size - at, at);
      if (n === 0) break;
      at += n;
    }
    return buf.subarray(0, at);
  } finally {
    closeSync(fd);
  }
}

/**
 * Checks an archive on its own: every event's hash and link, from its first `prev_hash` on; the summary line last,
 * naming exactly those events; with `key`, each writer mark and anchor it holds signed for the events it names.
 */
export function checkArchive(bytes: Buffer, key: Buffer | undefined): ArchiveCheck {
  const sha256 = createHash('sha256').update(bytes).digest('hex');
  const problems: string[] = [];
  const problem = (p: string) => {
    if (problems.length < MAX_PROBLEMS) problems.push(p);
  };
  const lines = bytes.toString('utf8').split('\n');
  if (lines.at(-1) === '') lines.pop();
  const hashes = new Map<number, string>();
  const sessions = new Set<string>();
  const marks: WriterMark[] = [];
  const anchors: unknown[] = [];
  let walker: ReturnType<typeof createChainWalker> | undefined;
  let broken = false;
  let summary: ArchiveSummary | undefined;
  let events = 0;
  let first: { id: number; prev: string } | undefined;
  lines.forEach((text, i) => {
    let v: Record<string, unknown>;
    try {
      v = JSON.parse(text) as Record<string, unknown>;
      if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error('not an object');
    } catch {
      return problem(`line ${i + 1}: not a JSON object`);
    }
    if (summary !== undefined) return problem(`line ${i + 1}: after the archive summary`);
    if (v.record === undefined) {
      if (marks.length + anchors.length > 0) return problem(`line ${i + 1}: an event after the records`);
      events++;
      if (broken) return;
      const row = { ...v, payload: safeCanonical(v.payload) };
      if (walker === undefined) {
        first = { id: Number(v.event_id), prev: String(v.prev_hash) };
        walker = createChainWalker({ eventId: first.id - 1, hash: first.prev });
      }
      const bad = walker.step(row);
      if (bad !== undefined) {
        broken = true;
        return problem(`event ${bad.badEventId}: ${bad.reason} (${bad.detail})`);
      }
      hashes.set(Number(v.event_id), String(v.hash));
      sessions.add(String(v.session_id));
    } else if (v.record === 'writer_mark') marks.push(v as unknown as WriterMark);
    else if (v.record === 'anchor') anchors.push(v);
    else if (v.record === 'archive_summary') summary = v as unknown as ArchiveSummary;
    else problem(`line ${i + 1}: unknown record ${JSON.stringify(v.record).slice(0, 40)}`);
  });
  if (summary === undefined) problem('no archive summary: the archive is cut short');
  else {
    const last = first === undefined ? undefined : first.id + events - 1;
    const expect: [string, unknown, unknown][] = [
      ['first', summary.first, first?.id],
      ['last', summary.last, last],
      ['prev_hash', summary.prev_hash, first?.prev],
      ['last_hash', summary.last_hash, last === undefined ? undefined : hashes.get(last)],
      ['events', summary.events, events],
      ['sessions', summary.sessions, sessions.size],
      ['writer_marks', summary.writer_marks, marks.length],
      ['anchors', summary.anchors, anchors.length],
    ];
    for (const [field, said, found] of expect)
      if (said !== found)
        problem(`the summary says ${field} ${String(said)}, the archive holds ${String(found)}`);
  }
  let signed: ArchiveCheck['signed'];
  if (key !== undefined) {
    signed = { marks: 0, anchors: 0 };
    for (const m of marks) {
      if (isMarkSigned(key, m, hashes.get(m.last))) signed.marks++;
      else problem(`writer mark ${m.first}-${m.last}: not signed with this key for these events`);
    }
    for (const v of anchors) {
      const { record: _record, line: _line, ...fields } = v as Record<string, unknown>;
      const a = parseAnchor(JSON.stringify(fields));
      const held = typeof a === 'object' ? hashes.get(a.events) : undefined;
      if (typeof a === 'object' && isAnchorSigned(key, a) && (held === undefined || held === a.head))
        signed.anchors++;
      else problem(`anchor ${typeof a === 'object' ? `#${a.seq}` : ''}: not signed, or its head differs`);
    }
  }
  return { problems, ...(summary === undefined ? {} : { summary }), sha256, signed };
}

const safeCanonical = (payload: unknown): unknown => {
  try {
    return canonicalJson(payload);
  } catch {
    return payload;
  }
};
