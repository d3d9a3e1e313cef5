import { afterEach } from 'vitest';
import type { AuditStore } from '../../../src/audit/audit-store.js';
import type { GatedFixture } from '../../helpers/gated-fixture.js';
import { startGatedServer, type GatedServerOptions } from '../../helpers/gated-server.js';
import { runCli } from '../../helpers/run-cli.js';
import { type Connected } from '../../helpers/stdio-client.js';
import { waitFor } from '../../helpers/wait-for.js';
import { rawRequest } from './raw-request.js';

/** Approvals asked, in the console only (the browser is never opened by tests). */
export const consoleConfig = (o: { waitMs?: number; timeoutMs?: number; extra?: string } = {}): string =>
  'approval:\n  mode: ask\n  console: true\n  console_open_browser: false\n' +
  `  console_wait_ms: ${o.waitMs ?? 25_000}\n  timeout_ms: ${o.timeoutMs ?? 120_000}\n${o.extra ?? ''}`;

const PENDING_FORM = /method="post" action="[^"]*\/approvals\/([A-Za-z0-9_-]+)"/g;

/**
 * The console's base URL, found as the person finds it: `skills-mcp console` with the server's audit path (and,
 * for a PostgreSQL log, `env` naming the server's state folder: `XDG_STATE_HOME`).
 */
export function consoleBase(auditPath: string, env: Record<string, string> = {}): string {
  const r = runCli(['console', '--audit', auditPath], { env });
  const base = /^(http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\/)$/m.exec(r.stdout)?.[1];
  if (base === undefined) throw new Error(`skills-mcp console printed no link:\n${r.stdout}${r.stderr}`);
  return base;
}

/** The pages of the approvals waiting on the console's index, in page order (oldest first). */
export async function pendingLinks(base: string): Promise<string[]> {
  const body = (await rawRequest(base)).body;
  return [...new Set([...body.matchAll(PENDING_FORM)].map((m) => `${base}approvals/${m[1]}`))];
}

export type ToolResult = Awaited<ReturnType<Connected['client']['callTool']>>;

export interface PendingCall {
  /** The tool result, once the person decided (or the wait ended). */
  result: Promise<ToolResult>;
  /** The approval page of this call: the oldest waiting approval on the console's index no earlier call took. */
  link: Promise<string>;
  /** Every progress message. */
  progress: string[];
}

export interface ConsoleServer {
  c: Connected;
  fx: GatedFixture;
  /** The console's base URL (with the secret), from `skills-mcp console`. */
  base: string;
  /** Log messages (`notifications/message`) the client got. */
  logs: unknown[];
  call(args?: Record<string, unknown>, name?: string, signal?: AbortSignal): PendingCall;
  /** `status:decision:reason:channel` per call, oldest first. */
  decisions(): string[];
  withAudit<T>(fn: (a: AuditStore) => T): T;
  close(): Promise<void>;
}

/** The built binary over stdio, for a client that did not declare elicitation, with the console on. */
export async function startConsoleServer(
  opts: Omit<GatedServerOptions, 'elicitation'> & { config?: string } = {},
): Promise<ConsoleServer> {
  const { fx, c, close } = await startGatedServer(opts.config ?? consoleConfig(), {
    ...opts,
    // "approval console ready", which this waits for, is an info line: stdio leaves those out unless asked.
    env: { SKILLS_MCP_LOG_LEVEL: 'info', ...opts.env },
    elicitation: false,
  });
  const logs: unknown[] = [];
  c.client.setNotificationHandler('notifications/message', (n: { params: unknown }) => {
    logs.push(n.params);
  });
  let base: string;
  try {
    await waitFor(() => c.stderr().includes('approval console ready'), 10_000, 'the console to start');
    base = consoleBase(fx.auditPath);
  } catch (e) {
    await close();
    throw e;
  }
  const taken = new Set<string>();
  /**
   * A new request's approval is the oldest one not taken yet; a retry continues the newest taken one (once no new
   * one showed up for half a second).
   */
  const nextLink = (): Promise<string> => {
    const since = Date.now();
    return waitFor(
      async () => {
        const links = await pendingLinks(base);
        const link =
          links.find((l) => !taken.has(l)) ?? (Date.now() - since >= 500 ? links.at(-1) : undefined);
        if (link !== undefined) taken.add(link);
        return link;
      },
      120_000,
      'the approval on the console',
    );
  };
  const withAudit = <T>(fn: (a: AuditStore) => T): T => {
    const store = fx.audit();
    try {
      return fn(store);
    } finally {
      store.close();
    }
  };
  return {
    c,
    fx,
    base,
    logs,
    call(args = { text: 'hi' }, name = 'echo', signal) {
      const progress: string[] = [];
      let gotLink!: (l: string) => void;
      const link = new Promise<string>((r) => (gotLink = r));
      const result = c.client.callTool(
        { name, arguments: args },
        {
          ...(signal === undefined ? {} : { signal }),
          onprogress: (p) => {
            // Once the server is gone the console refuses connections: the link is never found, and that is no error.
            if (progress.length === 0) nextLink().then(gotLink, () => undefined);
            progress.push(p.message ?? '');
          },
        },
      );
      // Handled here too, so a test that fails before awaiting it does not leave an unhandled rejection.
      result.catch(() => undefined);
      return { result, link, progress };
    },
    decisions: () =>
      withAudit((a) =>
        a.listCalls().map((r) => {
          const channel = a.getCall(r.callId)?.approval?.channel ?? '-';
          return `${r.status ?? r.state}:${r.approvalDecision ?? '-'}:${r.approvalReason ?? '-'}:${channel}`;
        }),
      ),
    withAudit,
    close,
  };
}

/** `startConsoleServer` for the tests of a describe block: every server started is closed after each test. */
export function consoleServers(): (
  opts?: Parameters<typeof startConsoleServer>[0],
) => Promise<ConsoleServer> {
  const started: ConsoleServer[] = [];
  afterEach(async () => {
    for (const s of started.splice(0)) await s.close();
  });
  return async (opts) => {
    const s = await startConsoleServer(opts);
    started.push(s);
    return s;
  };
}

export { textOf } from '../../helpers/text-of.js';
