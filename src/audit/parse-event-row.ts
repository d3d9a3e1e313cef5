import { z } from 'zod';
import { SkillsError } from '../errors.js';
import { EVENT_TYPES } from './event-types.js';
import { payloadSchemas } from './payload-schemas.js';
import type { AuditEvent } from './types.js';
import type { HashedFields } from './event-hash.js';

/** A row of `events` as SQLite returns it. Rows come from a file anyone could have edited: check them. */
export const EventRowSchema = z.strictObject({
  event_id: z.int().min(1).describe('Position in the chain'),
  ts: z.int().describe('Commit time, ms since the epoch'),
  session_id: z.string().min(1).describe('Session the event belongs to'),
  call_id: z.string().min(1).nullable().describe('Call the event belongs to'),
  type: z.enum(EVENT_TYPES).describe('Event type'),
  payload: z.string().describe('Canonical JSON payload'),
  prev_hash: z.string().describe('Hash of the previous event'),
  hash: z.string().describe('This event’s hash'),
});
export type EventRow = z.infer<typeof EventRowSchema>;

/** The JSONL export line of an event: the hashed fields plus the chain columns, snake_case as hashed. */
export interface ExportedEvent extends HashedFields {
  prev_hash: string;
  hash: string;
}

/** Parses a raw row without judging its payload's shape (for verify and export). */
export function parseRawEventRow(row: unknown): ExportedEvent {
  const r = EventRowSchema.safeParse(row);
  if (!r.success) throw malformed(row, r.error.issues[0]?.message ?? 'bad row');
  let payload: unknown;
  try {
    payload = JSON.parse(r.data.payload);
  } catch (cause) {
    throw malformed(row, 'payload is not JSON', cause);
  }
  return { ...r.data, payload };
}

/** Parses a row into a typed event, checking the payload against its type's schema. */
export function parseEventRow(row: unknown): AuditEvent {
  const raw = parseRawEventRow(row);
  const type = raw.type as keyof typeof payloadSchemas;
  const payload = payloadSchemas[type].safeParse(raw.payload);
  if (!payload.success)
    throw malformed(row, `payload does not match ${type}: ${payload.error.issues[0]?.message}`);
  return {
    eventId: raw.event_id,
    ts: raw.ts,
    sessionId: raw.session_id,
    callId: raw.call_id,
    type,
    payload: payload.data,
    prevHash: raw.prev_hash,
    hash: raw.hash,
  } as AuditEvent;
}

function malformed(row: unknown, why: string, cause?: unknown): SkillsError {
  const id = (row as { event_id?: unknown } | null)?.event_id;
  return new SkillsError('AUDIT_FAILED', `audit event ${String(id)} is malformed: ${why}`, {
    hint: 'Run `skills-mcp audit verify` to check the log.',
    details: { eventId: id },
    cause,
  });
}
