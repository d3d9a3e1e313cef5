export type { AuditStore } from './audit-store.js';
export { openAuditStore, type OpenAuditStoreOptions } from './open-audit-store.js';
export { defaultAuditPath, type AuditPathContext } from './default-audit-path.js';
export {
  EVENT_TYPES,
  CALL_EVENT_TYPES,
  TERMINAL_EVENT_TYPES,
  type EventType,
  type CallEventType,
} from './event-types.js';
export { GENESIS_HASH, eventHash, type HashedFields } from './event-hash.js';
export { assertPrivate } from './assert-private.js';
export { isOwnerAlive, type SessionOwner } from './is-owner-alive.js';
export { EventRowSchema, type ExportedEvent } from './parse-event-row.js';
export { SCHEMA_VERSION, MIGRATIONS } from './migrate.js';
export * from './payload-schemas.js';
export * from './approval-payload-schemas.js';
export * from './call-payload-schemas.js';
export * from './caller-record-schema.js';
export * from './operator-payload-schemas.js';
export * from './session-payload-schemas.js';
export { Sha256Schema } from './payload-fields.js';
export type * from './types.js';
