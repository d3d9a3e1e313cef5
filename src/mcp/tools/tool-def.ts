import type { CallToolResult, ServerContext, ToolAnnotations } from '@modelcontextprotocol/server';
import type * as z from 'zod';

/** A tool as a small data object: name, schema, annotations, handler. Registered from a list. */
export interface ToolDef<In extends z.ZodObject = z.ZodObject> {
  name: string;
  config: {
    title: string;
    description: string;
    inputSchema: In;
    outputSchema?: z.ZodObject;
    annotations: ToolAnnotations;
  };
  handler: (args: z.infer<In>, ctx: ServerContext) => CallToolResult | Promise<CallToolResult>;
}
