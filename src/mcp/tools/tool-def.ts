import type {
  CallToolResult,
  InputRequiredResult,
  ScopeChallengeHandler,
  ServerContext,
  StandardSchemaWithJSON,
  ToolAnnotations,
} from '@modelcontextprotocol/server';

/** A tool as a small data object: name, schema, annotations, handler. Registered from a list. */
export interface ToolDef<Args = Record<string, unknown>> {
  name: string;
  config: {
    title: string;
    description: string;
    inputSchema: StandardSchemaWithJSON;
    outputSchema?: StandardSchemaWithJSON;
    annotations: ToolAnnotations;
    /** OAuth scopes a call needs beyond the catalog's (tools that run skill scripts: see `runScopeChallenge`). */
    scopeChallenge?: ScopeChallengeHandler;
  };
  /** The skill a call of this tool is about, for the audit log (read-only tools). */
  skillOf?: (args: Args) => string | null;
  handler: (
    args: Args,
    ctx: ServerContext,
  ) => CallToolResult | InputRequiredResult | Promise<CallToolResult | InputRequiredResult>;
}

/**
 * A read-only tool that touches nothing outside the server. The destructive and idempotent hints mean something only
 * for a tool that is not read-only (the spec's defaults), so they are not repeated in every listing.
 */
export const READ_ONLY: ToolAnnotations = Object.freeze({ readOnlyHint: true, openWorldHint: false });
