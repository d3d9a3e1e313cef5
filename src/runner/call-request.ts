import type { Skill } from '../skills/types.js';
import type { SessionInfo } from './session.js';

/** A gated call as the MCP layer hands it over: already resolved to a skill, input already schema-checked. */
export interface CallRequest {
  /** MCP tool name (`<skill>` or `run_skill_script`). */
  tool: string;
  session: SessionInfo;
  skill: Skill;
  /** Script relative to the skill folder; undefined = the entry point (or `module`). */
  script?: string;
  /** A Python module of the skill run as `python3 -m <module>` (instead of `script`). */
  module?: string;
  /** Extra argv for `run_skill_script` (never a shell string). */
  args?: readonly string[];
  /** JSON input, given to the script on stdin. */
  input?: unknown;
}
