import type { AuditStore } from '../../../src/audit/audit-store.js';
import { gatedFixture } from '../../helpers/gated-fixture.js';
import { connectStdio, waitFor, type Connected, type Era } from '../../helpers/stdio-client.js';

/** Approvals asked, in the console only (the browser is never opened by tests). */
export const consoleConfig = (o: { waitMs?: number; timeoutMs?: number; extra?: string } = {}): string =>
  'approval:\n  mode: ask\n  console: true\n  console_open_browser: false\n' +
  `  console_wait_ms: ${o.waitMs ?? 25_000}\n  timeout_ms: ${o.timeoutMs ?? 120_000}\n${o.extra ?? ''}`;

const LINK = /(http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\/approvals\/[A-Za-z0-9_-]+)/;

export type ToolResult = Awaited<ReturnType<Connected['client']['callTool']>>;

export interface PendingCall {
  /** The tool result, once the person decided (or the wait ended). */
  result: Promise<ToolResult>;
  /** The approval page link from the first progress notification. */
  link: Promise<string>;
  /** Every progress message. */
  progress: string[];
}

export interface ConsoleServer {
  c: Connected;
  fx: ReturnType<typeof gatedFixture>;
  /** The console's base URL (with the secret), from the server log. */
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
  opts: { era?: Era; config?: string; args?: string[]; env?: Record<string, string> } = {},
): Promise<ConsoleServer> {
  const fx = gatedFixture(opts.config ?? consoleConfig());
  const c = await connectStdio({
    era: opts.era ?? 'auto',
    args: [
      '--skills',
      fx.skills,
      '--config',
      fx.configFile,
      '--audit',
      fx.auditPath,
      '--no-watch',
      ...(opts.args ?? []),
    ],
    capabilities: {},
    ...(opts.env === undefined ? {} : { env: opts.env }),
  });
  const logs: unknown[] = [];
  c.client.setNotificationHandler('notifications/message', (n: { params: unknown }) => {
    logs.push(n.params);
  });
  await waitFor(() => c.stderr().includes('approval console ready'), 10_000, 'the console to start');
  const base = /"url":"(http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]+\/)","msg":"approval console ready"/.exec(
    c.stderr(),
  )?.[1];
  if (base === undefined) throw new Error(`no console URL in the log:\n${c.stderr()}`);
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
            progress.push(p.message ?? '');
            const m = LINK.exec(p.message ?? '');
            if (m?.[1] !== undefined) gotLink(m[1]);
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
    close: async () => {
      await c.close();
      fx.cleanup();
    },
  };
}

export const textOf = (r: ToolResult): string =>
  (r.content as { type: string; text?: string }[]).map((x) => x.text ?? '').join('\n');
