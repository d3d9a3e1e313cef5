import {
  createRequestStateCodec,
  McpServer,
  type CallToolResult,
  type RegisteredTool,
} from '@modelcontextprotocol/server';
import type { SessionInfo } from '../runner/session.js';
import type { CatalogDiff } from '../skills/diff-catalogs.js';
import type { Skill } from '../skills/types.js';
import type { GateBridge } from './gated-call.js';
import { serverInstructions } from './instructions.js';
import { serveSkillPrompts, type SkillPrompts } from './prompts/skill-prompts.js';
import { requestStateKey } from './request-state-key.js';
import { runArtifactsResource } from './resources/run-artifacts.js';
import { sessionFilesResource } from './resources/session-files.js';
import { skillFilesResource } from './resources/skill-files.js';
import type { ServerDeps } from './server-deps.js';
import { listSkillsTool } from './tools/list-skills.js';
import { loadSkillTool } from './tools/load-skill.js';
import { readSkillFileTool } from './tools/read-skill-file.js';
import { runSkillScriptTool } from './tools/run-skill-script.js';
import { runSkillTool } from './tools/run-skill-tool.js';
import { skillTool } from './tools/skill-tool.js';
import { refuseLargeInput } from './tool-input-limit.js';
import type { ToolDef } from './tools/tool-def.js';

/** How long after `initialized` the first run's preparation starts: the client's first lists come before it. */
const PREPARE_RUNS_DELAY_MS = 50;

/** Auto mode serves one tool per skill up to this many skills, else the compact pair. */
export const AUTO_PER_SKILL_LIMIT = 30;

export interface SkillsServer {
  /**
   * Builds one MCP server instance (one per connection or per stateless request) for a session. With `tool` (a
   * stateless request that calls that tool and nothing else), only that tool is registered: the instance answers
   * the call exactly as a full one would, without registering the rest of the catalog first. An unknown name builds
   * the full instance.
   */
  build(session: SessionInfo, tool?: string): McpServer;
  /** Brings every live instance in line with the current catalog; each sends the matching list_changed. */
  catalogChanged(diff: CatalogDiff): void;
  /** Calls `listener` after each catalog change (for transports that notify outside live instances). */
  onChanged(listener: (diff: CatalogDiff) => void): () => void;
}

interface Live {
  server: McpServer;
  session: SessionInfo;
  bridge: GateBridge;
  compact: boolean;
  prompts: SkillPrompts;
  /** Per skill name, its tool (per-skill mode). */
  tools: Map<string, RegisteredTool>;
}

export function createSkillsServer(deps: ServerDeps): SkillsServer {
  const live = new Set<Live>();
  const listeners = new Set<(diff: CatalogDiff) => void>();
  // Signs the call id carried across an approval round trip (requestState); never stored or logged.
  const stateKey = requestStateKey(deps.stateSecret);
  const runner = deps.runner;
  const headline = deps.headline ?? deps.catalog;
  const withRunner = runner === undefined ? undefined : { ...deps, runner };

  const addTool = <A>(server: McpServer, session: SessionInfo, def: ToolDef<A>): RegisteredTool => {
    const audited = runner !== undefined && def.config.annotations.readOnlyHint === true;
    return server.registerTool(def.name, def.config, async (args: unknown, ctx) => {
      const result = refuseLargeInput(def.name, args, deps.log) ?? (await def.handler(args as A, ctx));
      if (audited) {
        const isError = (result as CallToolResult).isError === true;
        // While the log is not open yet (the first calls of a start), the answer waits for its record.
        await runner
          .recordReadOnly(session, def.name, def.skillOf?.(args as A) ?? null, args, !isError)
          ?.catch((err: unknown) => deps.log.error({ err }, 'could not audit a read-only call'));
      }
      return result;
    });
  };

  const toolFor = (session: SessionInfo, bridge: GateBridge, skill: Skill): ToolDef =>
    withRunner !== undefined && skill.kind === 'executable'
      ? runSkillTool(withRunner, skill, session, bridge)
      : skillTool(deps, skill, withRunner !== undefined);

  /** A skill's tool (per-skill mode; in compact mode there is nothing per skill). Its prompt is served with it. */
  const registerSkill = (l: Live, skill: Skill) => {
    try {
      l.tools.set(skill.name, addTool(l.server, l.session, toolFor(l.session, l.bridge, skill)));
      l.prompts.include(skill.name);
    } catch (err) {
      l.prompts.exclude(skill.name);
      deps.log.warn({ err, skill: skill.name }, 'could not register skill');
    }
  };

  const instance = (session: SessionInfo, compact: boolean) => {
    const catalog = headline();
    const timeoutMs = deps.config.approval.timeout_ms;
    const codec = createRequestStateCodec<{ callId: string; via?: 'url' }>({
      key: stateKey,
      ttlSeconds: Math.ceil(timeoutMs / 1000) + 60,
      bind: () => session.id,
    });
    const server = new McpServer(
      { name: 'skills-mcp', version: deps.version, title: 'Agent Skills' },
      {
        instructions: serverInstructions(catalog, compact, runner !== undefined),
        // Lets 2025-era clients call logging/setLevel (conformance `logging-set-level`); logs go to stderr.
        capabilities: { logging: {} },
        requestState: { verify: (state, ctx) => codec.verify(state, ctx) },
        // A backstop only: 2025-era gated calls ask inside their own open request (`ask-in-request.ts`), so the
        // SDK's legacy shim serves no approval; were one to reach it, our own approval timeout still decides first.
        inputRequired: { roundTimeoutMs: timeoutMs + 5_000 },
      },
    );
    const bridge: GateBridge = {
      server,
      mintState: (callId, ctx, via) => codec.mint(via === undefined ? { callId } : { callId, via }, ctx),
    };
    return { server, bridge };
  };

  const staticTools = (session: SessionInfo, bridge: GateBridge, compact: boolean): ToolDef<never>[] => {
    const statics: ToolDef<never>[] = [readSkillFileTool(deps)];
    if (compact) statics.push(listSkillsTool(deps), loadSkillTool(deps));
    if (withRunner !== undefined) statics.push(runSkillScriptTool(withRunner, session, bridge));
    return statics;
  };

  const isCompact = () => {
    const mode = deps.config.tools;
    return mode === 'compact' || (mode === 'auto' && headline().skills.length > AUTO_PER_SKILL_LIMIT);
  };

  /** The instance for one call of `tool`, or undefined when no tool has that name. */
  const buildFor = (session: SessionInfo, tool: string): McpServer | undefined => {
    const compact = isCompact();
    const skill = compact ? undefined : deps.catalog().byToolName(tool);
    const { server, bridge } = instance(session, compact);
    const def =
      skill !== undefined
        ? toolFor(session, bridge, skill)
        : staticTools(session, bridge, compact).find((d) => d.name === tool);
    if (def === undefined) return undefined;
    try {
      addTool(server, session, def);
    } catch {
      return undefined; // the full build logs why, and answers as it always did
    }
    return server;
  };

  const build = (session: SessionInfo, tool?: string): McpServer => {
    const focused = tool === undefined ? undefined : buildFor(session, tool);
    if (focused !== undefined) return focused;
    const compact = isCompact();
    const { server, bridge } = instance(session, compact);
    const prompts = serveSkillPrompts(server, deps);
    const l: Live = { server, session, bridge, compact, prompts, tools: new Map() };
    for (const def of staticTools(session, bridge, compact)) addTool(server, session, def);
    // One tool per skill: its kind and schema need the whole check.
    if (!compact) for (const skill of deps.catalog().skills) registerSkill(l, skill);
    const extension = deps.skillsExtension?.forSession(deps, session);
    const files = skillFilesResource(deps, extension?.checkRead);
    server.registerResource(files.name, files.template, files.config, (uri, vars) => files.read(uri, vars));
    // After skill-files, so skill:// reads keep going through it (and its digest check).
    extension?.attach(server);
    if (runner !== undefined) {
      const runs = runArtifactsResource(runner, session);
      server.registerResource(runs.name, runs.template, runs.config, (uri, vars) => runs.read(uri, vars));
    }
    if (runner !== undefined && deps.runsDir !== undefined && deps.config.runs.session_folder.enabled) {
      const own = sessionFilesResource(deps.runsDir, session);
      server.registerResource(own.name, own.template, own.config, (uri, vars) => own.read(uri, vars));
    }
    if (runner !== undefined) {
      // Once the client is connected, the first run's one-time work starts, after the first lists are answered.
      const initialized = server.server.oninitialized;
      server.server.oninitialized = () => {
        initialized?.();
        const ahead = { info: session, open: () => live.has(l) };
        setTimeout(
          () => void runner.prepareRuns(ahead).catch(() => undefined),
          PREPARE_RUNS_DELAY_MS,
        ).unref();
      };
    }
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
        l.tools.get(name)?.remove();
        l.tools.delete(name);
        l.prompts.include(name);
      }
      if (!l.compact) {
        for (const name of [...diff.added, ...diff.changed]) {
          const skill = catalog.get(name);
          if (skill !== undefined) registerSkill(l, skill);
        }
      }
      l.prompts.changed();
      l.server.sendResourceListChanged();
    }
    for (const listener of listeners) listener(diff);
  };

  const onChanged = (listener: (diff: CatalogDiff) => void) => {
    listeners.add(listener);
    return () => void listeners.delete(listener);
  };

  return { build, catalogChanged, onChanged };
}
