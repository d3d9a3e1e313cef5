import { createHmac, timingSafeEqual } from 'node:crypto';
import type { SqliteDb } from './sqlite/sqlite-db.js';
import { canonicalJson } from '../canonical-json.js';
import type { ChainPoint } from './verify-chain.js';

/**
 * A writer mark: "the holder of the anchor key appended events `first`–`last`, the last one hashing to `head`".
 * The server writes one in the same transaction as the events it covers (extending it while nobody else appends in
 * between), so a crash leaves no event of ours unmarked and a live log is marked up to its head. `head` is not
 * stored: it is read from the chain, so a mark stands only for the events as they were appended (the hash of the
 * last one covers every event before it). Whoever can write the database but does not hold the key can append
 * events that link, but cannot mark them: `audit verify` names them as not vouched for.
 */
export interface WriterMark {
  first: number;
  last: number;
  mac: string;
}

const macOf = (key: Buffer, m: { first: number; last: number; head: string }) =>
  createHmac('sha256', key)
    .update('skills-mcp audit writer mark v1\0', 'utf8')
    .update(canonicalJson({ first: m.first, last: m.last, head: m.head }), 'utf8')
    .digest('hex');

/** Whether `mark` was made with `key` for the events whose last one hashes to `head` (constant time). */
export function isMarkSigned(key: Buffer, mark: WriterMark, head: string | undefined): boolean {
  if (head === undefined || !/^[0-9a-f]{64}$/.test(mark.mac)) return false;
  return timingSafeEqual(Buffer.from(macOf(key, { ...mark, head }), 'hex'), Buffer.from(mark.mac, 'hex'));
}

/** Every mark in the database, by first event (none in a log from before marks). */
export function readWriterMarks(db: SqliteDb): WriterMark[] {
  const table = db
    .prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'writer_marks'")
    .get();
  if (table === undefined) return [];
  return db
    .prepare('SELECT first_event AS first, last_event AS last, mac FROM writer_marks ORDER BY first_event')
    .all() as WriterMark[];
}

export interface WriterMarker {
  /** Marks an event just inserted (in the same transaction). */
  mark(point: ChainPoint): void;
  /**
   * The last event this process appended that is still in the log as it hashed then (one rolled back is skipped);
   * undefined before the first. What the anchoring may sign up to.
   */
  ownHead(): ChainPoint | undefined;
}

const KEPT = 256;

/**
 * Marks each event this process appends. A run of our own events shares one mark, extended in place when the next
 * event directly follows the one the mark ends at and that one still hashes as we wrote it (nobody appended in
 * between, nothing was rolled back); otherwise a new mark starts. `key` may be a function: it is asked at each
 * event, inside the event's transaction, until it gives a key (an event appended while there is none stays unmarked).
 */
export function createWriterMarker(db: SqliteDb, key: Buffer | (() => Buffer | undefined)): WriterMarker {
  let found = typeof key === 'function' ? undefined : key;
  const keyNow = () => (found ??= (key as () => Buffer | undefined)());
  const insert = db.prepare('INSERT INTO writer_marks (first_event, last_event, mac) VALUES (?, ?, ?)');
  const extend = db.prepare(
    'UPDATE writer_marks SET last_event = ?, mac = ? WHERE first_event = ? AND last_event = ? AND mac = ?',
  );
  const hashAt = db.prepare('SELECT hash FROM events WHERE event_id = ?');
  const holds = (p: ChainPoint) => (hashAt.get(p.eventId) as { hash: string } | undefined)?.hash === p.hash;
  let run: (WriterMark & { head: string }) | undefined;
  const own: ChainPoint[] = [];
  return {
    mark({ eventId, hash }) {
      const key = keyNow();
      if (key === undefined) return;
      const prev = run;
      if (prev !== undefined && prev.last === eventId - 1 && holds({ eventId: prev.last, hash: prev.head })) {
        const mac = macOf(key, { first: prev.first, last: eventId, head: hash });
        if (extend.run(eventId, mac, prev.first, prev.last, prev.mac).changes === 1) {
          run = { first: prev.first, last: eventId, mac, head: hash };
          own.push({ eventId, hash });
          if (own.length > KEPT) own.shift();
          return;
        }
      }
      const mac = macOf(key, { first: eventId, last: eventId, head: hash });
      insert.run(eventId, eventId, mac);
      run = { first: eventId, last: eventId, mac, head: hash };
      own.push({ eventId, hash });
      if (own.length > KEPT) own.shift();
    },
    ownHead() {
      while (own.length > 0 && !holds(own.at(-1)!)) own.pop();
      return own.at(-1);
    },
  };
}
