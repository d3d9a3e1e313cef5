import type { Config } from '../config/config-schema.js';
import type { Logger } from '../log.js';
import type { SkillsServer } from '../mcp/create-server.js';
import type { Catalog } from '../skills/catalog.js';
import type { CliIo } from './io.js';

/** What `serve` has set up before a transport takes over. */
export interface ServeContext {
  config: Config;
  log: Logger;
  io: CliIo;
  server: SkillsServer;
  catalog: () => Catalog;
  version: string;
}
