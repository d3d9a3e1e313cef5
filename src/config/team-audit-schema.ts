import * as z from 'zod';

/** Replica leases of a PostgreSQL audit log: how often a server renews its lease and how long one lasts. */
export const AuditLeaseSchema = z
  .strictObject({
    heartbeat_ms: z
      .number()
      .int()
      .min(50)
      .default(10_000)
      .describe('How often a server writing a PostgreSQL audit log renews its lease.'),
    lease_ms: z
      .number()
      .int()
      .min(200)
      .default(30_000)
      .describe(
        'How long a lease lasts without renewal: then a peer (or the server itself, restarted) marks that ' +
          "server's open calls interrupted and denies its pending approvals. At least twice heartbeat_ms.",
      ),
  })
  .prefault({})
  .refine((l) => l.lease_ms >= 2 * l.heartbeat_ms, {
    message: 'lease_ms must be at least twice heartbeat_ms',
    path: ['lease_ms'],
  })
  .describe('Replica leases of a PostgreSQL audit log (see docs/serving-a-team.md).');

/** Read-only call records of a PostgreSQL audit log: how many may wait before new ones are shed. */
export const AuditRecordsSchema = z
  .strictObject({
    max_queued: z
      .number()
      .int()
      .min(1)
      .default(10_000)
      .describe(
        'Read-only call records that may wait for a PostgreSQL audit log before new ones are shed (not recorded, ' +
          'counted in /healthz and the warn log), so that they never hold up a gated call.',
      ),
  })
  .prefault({})
  .describe('Read-only call records of a PostgreSQL audit log.');
