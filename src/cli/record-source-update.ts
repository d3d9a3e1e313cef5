import type { EventPayloads } from '../audit/payload-schemas.js';
import { appendCliEvent, type CliAudit } from './append-cli-event.js';

/**
 * Appends one `source_updated` event, in its own `cli` session, before the new checkout takes the old one's place, so
 * no commit is put in place that the log does not name. Throws when the log refuses it (the old checkout stays).
 */
export function recordSourceUpdate(audit: CliAudit, payload: EventPayloads['source_updated']): void {
  appendCliEvent(audit, 'skills-mcp sources update', { type: 'source_updated', payload });
}
