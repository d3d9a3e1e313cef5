import { readFileSync, statSync } from 'node:fs';
import { resolve } from 'node:path';
import { isSkillsError, SkillsError } from '../errors.js';
import { serveOverHttp, type HttpServing } from '../transport/http/serve-over-http.js';
import type { CliIo, ExitCode } from './io.js';
import type { ServeContext } from './serve-context.js';

const MIN_TOKEN_LENGTH = 16;

/**
 * The bearer token from `http.token_file` (flag --token-file) or SKILLS_MCP_TOKEN; undefined when neither is set.
 * Both at once is refused: which one wins would be a guess, and for a secret a wrong guess locks people out.
 */
export function readToken(tokenFile: string | undefined, io: CliIo): string | undefined {
  const fromEnv = io.env.SKILLS_MCP_TOKEN;
  if (tokenFile !== undefined && fromEnv !== undefined && fromEnv !== '') {
    throw new SkillsError('CONFIG_INVALID', 'both SKILLS_MCP_TOKEN and a token file are set', {
      hint: 'Use one of them.',
    });
  }
  let token = fromEnv;
  if (tokenFile !== undefined) {
    const path = resolve(io.cwd, tokenFile);
    try {
      token = readFileSync(path, 'utf8').trim();
    } catch (cause) {
      throw new SkillsError('CONFIG_INVALID', `cannot read the token file ${tokenFile}`, { cause });
    }
    if ((statSync(path).mode & 0o077) !== 0)
      io.err(`skills-mcp: warning: the token file ${tokenFile} is readable by other users (chmod 600 it)\n`);
  }
  if (token === undefined || token === '') return undefined;
  if (token.length < MIN_TOKEN_LENGTH || !/^[\x21-\x7e]+$/.test(token)) {
    throw new SkillsError(
      'CONFIG_INVALID',
      `the token must be at least ${MIN_TOKEN_LENGTH} printable characters without spaces`,
      { hint: 'Generate one with `openssl rand -hex 32`.' },
    );
  }
  return token;
}

/** Serves Streamable HTTP until SIGINT/SIGTERM (a second signal stops without waiting for running requests). */
export async function runHttp(ctx: ServeContext): Promise<ExitCode> {
  const { config, log, io } = ctx;
  let serving: HttpServing;
  try {
    const token = readToken(config.http.token_file, io);
    serving = await serveOverHttp({
      server: ctx.server,
      log,
      host: config.http.host,
      port: config.http.port,
      token,
      oauth: config.http.oauth,
      allowedHosts: config.http.allowed_hosts,
      allowedOrigins: config.http.allowed_origins,
      limits: {
        maxConnections: config.http.max_connections,
        headersTimeoutMs: config.http.headers_timeout_ms,
        requestTimeoutMs: config.http.request_timeout_ms,
        maxInFlightPerClient: config.http.max_in_flight_per_client,
        maxListenStreamsPerClient: config.http.max_listen_streams_per_client,
        maxSessions: config.http.max_sessions,
        maxSessionsPerClient: config.http.max_sessions_per_client,
        sessionIdleMs: config.http.session_idle_ms,
        healthDetails: config.http.health_details,
      },
      onSessionEnd: (session, reason) => ctx.runner.endSession(session, reason),
      ...(ctx.recordCounts === undefined ? {} : { auditRecords: ctx.recordCounts }),
    });
    const auth = config.http.oauth !== undefined ? 'oauth' : token === undefined ? 'none' : 'bearer';
    log.info({ url: serving.url, auth }, 'serving Streamable HTTP');
    ctx.serving();
    if (auth === 'none' && config.approval.http_elicitation === 'any') {
      log.warn(
        'approval.http_elicitation is "any" and there is no token: any local program that reaches the port, ' +
          "the model's own HTTP client included, can answer the approval form and run skills it asked for " +
          '(set SKILLS_MCP_TOKEN to require a token)',
      );
    }
  } catch (e) {
    if (!isSkillsError(e) || e.code !== 'CONFIG_INVALID') throw e;
    io.err(`skills-mcp: ${e.message}${e.hint === undefined ? '' : `\n  ${e.hint}`}\n`);
    return 2;
  }
  io.err(
    `skills-mcp ${ctx.version} is serving ${ctx.catalog().skills.length} skills over Streamable HTTP at ${serving.url}\n` +
      `Health check: ${serving.url.replace(/\/mcp$/, '/healthz')}. Press Ctrl+C to stop.\n`,
  );
  let resolveStopped!: () => void;
  const stopped = new Promise<void>((r) => (resolveStopped = r));
  ctx.signals.onSignal((signal, count) => {
    log.info({ signal, force: count > 1 }, 'stopping');
    serving
      .close({ force: count > 1, reason: 'signal' })
      .catch((err: unknown) => log.error({ err }, 'error while stopping'))
      .finally(resolveStopped);
  });
  await stopped;
  log.info('stopped');
  return 0;
}
