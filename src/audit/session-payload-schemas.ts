import { z } from 'zod';
import { CallerRecordSchema } from './caller-record-schema.js';
import { CodeSchema, Sha256Schema } from './payload-fields.js';

/** The payloads of a session's own events: started, error, ended. */

export const SessionStartedPayloadSchema = z.strictObject({
  transport: z.enum(['stdio', 'http', 'cli']).describe('How the client reached us'),
  server_version: z.string().min(1).max(64).describe('skills-mcp version'),
  protocol_version: z.string().max(32).optional().describe('Negotiated MCP protocol version'),
  client: z
    .strictObject({
      name: z.string().max(128).describe('clientInfo.name'),
      version: z.string().max(64).optional().describe('clientInfo.version'),
    })
    .optional()
    .describe('What the client said it is'),
  principal_sha256: Sha256Schema.optional().describe(
    'sha256 of the authenticated principal (HTTP), never a token',
  ),
  caller: CallerRecordSchema.optional().describe('The signed-in caller of the session (HTTP with OAuth)'),
  owner: z
    .strictObject({
      pid: z.int().min(1).describe('Process id of the server that owns the session'),
      host: z.string().min(1).max(255).describe('Host name of that server'),
    })
    .describe('Filled in by the store: lets recovery tell a live session from a crashed one'),
});

export const SessionErrorPayloadSchema = z.strictObject({
  code: CodeSchema.describe('Error code'),
  ref: z.string().max(64).nullable().describe('Reference id of the logged error'),
  stage: CodeSchema.optional().describe('Pipeline stage, when known'),
});

export const SessionEndedPayloadSchema = z.strictObject({
  reason: z
    .enum(['client_closed', 'signal', 'shutdown', 'error', 'server_restart'])
    .describe('Why the session ended'),
  interrupted_calls: z.int().min(0).describe('Calls still open at the end, now interrupted'),
});
