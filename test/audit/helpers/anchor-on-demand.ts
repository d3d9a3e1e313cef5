import { startAnchoring, type AnchoringOptions } from '../../../src/audit/start-anchoring.js';
import { silentLogger } from '../../../src/log.js';

/** The server's anchoring of `store`, with no timer: it anchors when the test calls `anchorNow()` (and at `stop`). */
export const anchorOnDemand = (o: Omit<AnchoringOptions, 'intervalMs' | 'logAnchors' | 'log'>) =>
  startAnchoring({ intervalMs: 3_600_000, logAnchors: false, log: silentLogger(), ...o });
