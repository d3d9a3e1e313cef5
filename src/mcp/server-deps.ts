import type { ApprovalConsole } from '../console/index.js';
import type { Config } from '../config/config-schema.js';
import type { Logger } from '../log.js';
import type { Runner } from '../runner/runner-types.js';
import type { Catalog } from '../skills/catalog.js';
import type { Skill } from '../skills/types.js';
import type { SkillsExtensionState } from './skills-extension/skills-extension.js';

/** What the MCP layer needs. Passed in; nothing is reached for globally. */
export interface ServerDeps {
  /** The catalog being served now (replaced on hot reload), every stamp of it checked. */
  catalog: () => Catalog;
  /**
   * The same catalog as far as its skills' names, descriptions and number go: what the server's instructions,
   * prompts/list and the choice of compact tools need, without waiting for the rest of its check (a start from the
   * catalog cache checks each folder's skill file first, its other files after the first answers). Default:
   * `catalog`.
   */
  headline?: () => Catalog;
  /**
   * Reloads the catalog now, reading `stale`'s folder again whatever it looks like: called when its skill file no
   * longer holds the text that was validated. Without it such a skill's instructions are refused until a reload.
   */
  reloadSkills?: (stale: Skill) => void;
  config: Config;
  log: Logger;
  version: string;
  /** The gated-call pipeline. Without it the server only serves instructions and files (no runs). */
  runner?: Runner;
  /** Where the runs' folders are: the session's working folder is served from it (`skill-session://`). */
  runsDir?: string;
  /** The approval console: asks a person for clients that cannot show the approval form. */
  console?: ApprovalConsole;
  /** The MCP Skills extension, when it is on (its module is loaded only then). */
  skillsExtension?: SkillsExtensionState;
  /**
   * The secret replicas share to sign `requestState`, so an approval's retry may land on any of them. Without it
   * the key is random per process. Never logged, audited or passed to a script.
   */
  stateSecret?: Uint8Array;
}
