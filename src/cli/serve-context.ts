import type { RecordCounts } from '../audit/postgres/create-record-queue.js';
import type { Config } from '../config/config-schema.js';
import type { Logger } from '../log.js';
import type { SkillsServer } from '../mcp/create-server.js';
import type { Runner } from '../runner/runner-types.js';
import type { Catalog } from '../skills/catalog.js';
import type { CliIo } from './io.js';
import type { StopSignals } from './stop-signals.js';

/** What `serve` has set up before a transport takes over. */
export interface ServeContext {
  config: Config;
  log: Logger;
  io: CliIo;
  server: SkillsServer;
  /** The catalog as far as its skills' names and number go (see `ServerDeps.headline`). */
  catalog: () => Catalog;
  version: string;
  /** The gated-call pipeline: end a session's audit record when its connection ends. */
  runner: Runner;
  /** With a PostgreSQL log: what its queue of read-only records did (for `/healthz`). */
  recordCounts?: () => RecordCounts | undefined;
  /** SIGINT/SIGTERM, listened for since before start-up: the transport sets what a signal does. */
  signals: StopSignals;
  /** Called by the transport once it serves: work kept off the first answers' path starts then. */
  serving: () => void;
}
