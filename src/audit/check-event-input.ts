import { SkillsError } from '../errors.js';
import { assertPrivate } from './assert-private.js';
import type { EventType } from './event-types.js';
import { payloadSchemas } from './payload-schemas.js';

/** One event to write: the store has already chosen ids. */
export interface PendingEvent {
  type: EventType;
  sessionId: string;
  callId: string | null;
  payload: unknown;
}

const ID = /^[A-Za-z0-9_.:-]{1,128}$/;

/**
 * Checks what any store checks before writing an event: ids of the allowed shape, the payload against its type's
 * strict schema, and no raw value under a key named like one (`assertPrivate`). Returns the parsed payload; throws
 * AUDIT_FAILED (nothing written).
 */
export function checkEventInput(e: PendingEvent): Record<string, unknown> {
  if (!ID.test(e.sessionId) || (e.callId !== null && !ID.test(e.callId))) {
    throw refused(e, 'session and call ids are 1-128 characters of [A-Za-z0-9_.:-]');
  }
  const parsed = payloadSchemas[e.type].safeParse(e.payload);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const where = issue?.path.length ? issue.path.join('.') : '(payload)';
    throw new SkillsError(
      'AUDIT_FAILED',
      `invalid ${e.type} payload: ${where}: ${issue?.message ?? 'invalid'}`,
      {
        hint: 'Audit payloads hold hashes, sizes and key names only (see src/audit/payload-schemas.ts).',
        details: { type: e.type, path: where },
      },
    );
  }
  const payload = parsed.data as Record<string, unknown>;
  assertPrivate(payload);
  return payload;
}

/** The AUDIT_FAILED error of an event the store would not write. */
export function refused(e: PendingEvent, why: string, cause?: unknown): SkillsError {
  return new SkillsError('AUDIT_FAILED', `audit refused ${e.type}: ${why}`, {
    hint: 'The event was not written; do not go on with the step it records.',
    details: { type: e.type, sessionId: e.sessionId, callId: e.callId },
    cause,
  });
}
