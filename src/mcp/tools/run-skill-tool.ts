import { escapeForDisplay } from '../../escape-for-display.js';
import { effectiveRequests } from '../../gate/index.js';
import { fromJsonSchema, type StandardSchemaWithJSON } from '@modelcontextprotocol/server';
import type { Runner } from '../../runner/runner-types.js';
import type { SessionInfo } from '../../runner/session.js';
import type { JsonSchemaObject, Skill } from '../../skills/types.js';
import { runScopeChallenge } from '../auth-info.js';
import { gatedCall, type GateBridge } from '../gated-call.js';
import type { ServerDeps } from '../server-deps.js';
import { skillRemoved } from '../tool-error.js';
import type { ToolDef } from './tool-def.js';

const MAX_DESCRIPTION = 900;

/**
 * The input schema's validator, compiled once per schema (the runner keeps one schema object per entry point):
 * a stateless HTTP request builds a server instance, and so this tool, each time.
 */
const compiled = new WeakMap<object, StandardSchemaWithJSON>();
const inputSchemaOf = (schema: JsonSchemaObject): StandardSchemaWithJSON => {
  let s = compiled.get(schema);
  if (s === undefined) compiled.set(schema, (s = fromJsonSchema(schema)));
  return s;
};

/** An executable skill's tool: JSON in (its input schema), sandboxed run of its entry point, JSON out. */
export const runSkillTool = (
  deps: ServerDeps & { runner: Runner },
  skill: Skill,
  session: SessionInfo,
  bridge: GateBridge,
): ToolDef => {
  const entry = deps.runner.entryInput(skill);
  const description =
    skill.description.length > MAX_DESCRIPTION
      ? `${skill.description.slice(0, MAX_DESCRIPTION - 1)}…`
      : skill.description;
  const renamed = skill.toolName !== skill.name ? ` Skill "${skill.name}".` : '';
  const { network } = effectiveRequests(skill.requests, deps.config.skill_overrides[skill.name]).requests;
  return {
    name: skill.toolName,
    config: {
      title: `Skill: ${escapeForDisplay(skill.name)}`,
      description:
        `${description}\n\nRuns ${skill.entryPoint} in a sandbox${network ? ' with network access' : ''}; ` +
        `the user may be asked to approve it. Read its instructions with read_skill_file {"skill": "${skill.name}", "path": "${skill.skillFile}"}.${renamed}`,
      inputSchema: inputSchemaOf(entry.schema),
      annotations: {
        readOnlyHint: false,
        destructiveHint: false,
        openWorldHint: network,
      },
      scopeChallenge: runScopeChallenge(deps.config),
    },
    handler: async (args, ctx) => {
      const current = deps.catalog().get(skill.name);
      if (current === undefined) {
        return skillRemoved(skill.name, deps.log);
      }
      return gatedCall(deps, bridge, { tool: skill.toolName, session, skill: current, input: args }, ctx);
    },
  };
};
