import { SkillsError } from '../errors.js';
import type { EventType } from './event-types.js';

/** Events that ask a person or start a process: refused while the log cannot vouch for itself. */
const RUN_EVENTS: ReadonlySet<EventType> = new Set(['approval_requested', 'tool_call_started']);

/** Whether an event asks a person or starts a process (refused while the log cannot vouch for itself). */
export const isRunEvent = (type: EventType): boolean => RUN_EVENTS.has(type);

/** Throws AUDIT_CHAIN_BROKEN for an event that would ask or run while `runsRefused()` gives a reason. */
export function assertRunsAllowed(type: EventType, runsRefused: () => string | undefined): void {
  const broken = RUN_EVENTS.has(type) ? runsRefused() : undefined;
  if (broken === undefined) return;
  throw new SkillsError('AUDIT_CHAIN_BROKEN', `no new runs: the audit log failed verification (${broken})`, {
    hint: 'An operator must run `skills-mcp audit verify` and restore the log; read-only tools still answer.',
    details: { type },
  });
}
