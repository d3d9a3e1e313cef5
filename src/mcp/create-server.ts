import { McpServer, type RegisteredPrompt, type RegisteredTool } from '@modelcontextprotocol/server';
import type { SessionInfo } from '../runner/session.js';
import type { CatalogDiff } from '../skills/watch-catalog.js';
import type { Skill } from '../skills/types.js';
import { serverInstructions } from './instructions.js';
import { skillPrompt } from './prompts/skill-prompt.js';
import { skillFilesResource } from './resources/skill-files.js';
import type { ServerDeps } from './server-deps.js';
import { listSkillsTool } from './tools/list-skills.js';
import { loadSkillTool } from './tools/load-skill.js';
import { readSkillFileTool } from './tools/read-skill-file.js';
import { skillTool } from './tools/skill-tool.js';
import type { ToolDef } from './tools/tool-def.js';

/** Auto mode serves one tool per skill up to this many skills, else the compact pair. */
export const AUTO_PER_SKILL_LIMIT = 30;

export interface SkillsServer {
  /** Builds one MCP server instance (one per connection or per stateless request) for a session. */
  build(session: SessionInfo): McpServer;
  /** Brings every live instance in line with the current catalog; each sends the matching list_changed. */
  catalogChanged(diff: CatalogDiff): void;
}

interface Live {
  server: McpServer;
  session: SessionInfo;
  compact: boolean;
  perSkill: Map<string, { tool?: RegisteredTool; prompt: RegisteredPrompt }>;
}

const addTool = (server: McpServer, def: ToolDef): RegisteredTool =>
  server.registerTool(def.name, def.config, (args, ctx) => def.handler(args as never, ctx));

export function createSkillsServer(deps: ServerDeps): SkillsServer {
  const live = new Set<Live>();

  const registerSkill = (l: Live, skill: Skill) => {
    try {
      const tool = l.compact ? undefined : addTool(l.server, skillTool(deps, skill));
      const p = skillPrompt(deps, skill);
      const prompt = l.server.registerPrompt(p.name, p.config, p.handler);
      l.perSkill.set(skill.name, tool === undefined ? { prompt } : { tool, prompt });
    } catch (err) {
      deps.log.warn({ err, skill: skill.name }, 'could not register skill');
    }
  };

  const build = (session: SessionInfo): McpServer => {
    const catalog = deps.catalog();
    const mode = deps.config.tools;
    const compact = mode === 'compact' || (mode === 'auto' && catalog.skills.length > AUTO_PER_SKILL_LIMIT);
    const server = new McpServer(
      { name: 'skills-mcp', version: deps.version, title: 'Agent Skills' },
      { instructions: serverInstructions(catalog, compact) },
    );
    const l: Live = { server, session, compact, perSkill: new Map() };
    const statics: ToolDef[] = [readSkillFileTool(deps)];
    if (compact) statics.push(listSkillsTool(deps), loadSkillTool(deps));
    for (const def of statics) addTool(server, def);
    for (const skill of catalog.skills) registerSkill(l, skill);
    const r = skillFilesResource(deps);
    server.registerResource(r.name, r.template, r.config, (uri, vars) => r.read(uri, vars));
    live.add(l);
    const previous = server.server.onclose;
    server.server.onclose = () => {
      live.delete(l);
      previous?.();
    };
    return server;
  };

  const catalogChanged = (diff: CatalogDiff) => {
    const catalog = deps.catalog();
    for (const l of live) {
      for (const name of [...diff.removed, ...diff.changed]) {
        const entry = l.perSkill.get(name);
        entry?.tool?.remove();
        entry?.prompt.remove();
        l.perSkill.delete(name);
      }
      for (const name of [...diff.added, ...diff.changed]) {
        const skill = catalog.get(name);
        if (skill !== undefined) registerSkill(l, skill);
      }
      l.server.sendResourceListChanged();
    }
  };

  return { build, catalogChanged };
}
