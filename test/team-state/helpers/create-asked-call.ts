import type { ExportedEvent } from '../../../src/audit/parse-event-row.js';
import { waitFor } from '../../helpers/wait-for.js';

/**
 * A waiter for the next approval asked in the shared log (`events`: what it holds now), for calls made one after the
 * other: each call it returns resolves with the id of a call asked about that it has not returned before.
 */
export function createAskedCall(events: () => Promise<ExportedEvent[]>): () => Promise<string> {
  const seen = new Set<string>();
  return () =>
    waitFor(
      async () => {
        const asked = (await events()).find((e) => e.type === 'approval_requested' && !seen.has(e.call_id!));
        if (asked !== undefined) seen.add(asked.call_id!);
        return asked?.call_id ?? undefined;
      },
      15_000,
      'the approval to be asked',
    );
}
