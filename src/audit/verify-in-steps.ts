import type { AuditStore } from './audit-store.js';
import { GENESIS_HASH } from './event-hash.js';
import type { VerifyResult } from './types.js';
import type { ChainPoint } from './verify-chain.js';

/** Events checked per step: a few milliseconds of hashing, so requests are served in between. */
const STEP_EVENTS = 500;

/**
 * The whole chain check of `store.verify()` (every row from event 1: ids, links, canonical payloads, hashes), made
 * in steps of `step` events, each a short read of its own, with the event loop free in between: the writer thread
 * serves requests while a long log is checked. The log is append-only (its triggers refuse edits and deletions),
 * and each step resumes from the point the last one reached, checking that it still holds the same hash, so the
 * steps check what one walk would. Resolves with the result once a step reaches the head, or undefined if
 * `stopped()` turned true first.
 */
export async function verifyInSteps(
  store: Pick<AuditStore, 'verify'>,
  stopped: () => boolean,
  step = STEP_EVENTS,
): Promise<VerifyResult | undefined> {
  let from: ChainPoint | undefined;
  for (;;) {
    // First after the caller's turn (the writer thread says it is ready first), then between steps.
    await new Promise((resolve) => setImmediate(resolve));
    if (stopped()) return undefined;
    const r = store.verify(from, step);
    const walked = r.events - (from?.eventId ?? 0);
    if (!r.ok || walked < step) return r;
    from = { eventId: r.events, hash: r.head ?? GENESIS_HASH };
  }
}
