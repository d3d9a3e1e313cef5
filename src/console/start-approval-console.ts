import { randomBytes } from 'node:crypto';
import type { CallLog } from '../audit/call-log.js';
import type { Logger } from '../log.js';
import type { Runner } from '../runner/runner-types.js';
import { createApprovalQueue, type ApprovalQueue, type ConsoleApproval } from './approval-queue.js';
import { routeConsole } from './console-routes.js';
import { createSharedApprovals } from './inbound-approvals.js';
import { startConsoleServer } from './console-server.js';
import type { ApproverStore } from '../passkeys/approver-store.js';
import { createConsolePasskeys } from '../passkeys/console-passkeys.js';

/** The approval console: a local page where a person decides when the client cannot ask. */
export interface ApprovalConsole {
  /**
   * `http://127.0.0.1:PORT/SECRET/`: whoever has it can decide. It reaches the person only through a private file
   * (see `writeLinkFile`): never a log line, a tool result, `_meta` or a command line.
   */
  readonly url: string;
  readonly queue: ApprovalQueue;
  /**
   * `http://127.0.0.1:PORT/approve/<id>`: one approval's secret-free link, for URL-mode elicitation. It holds no
   * secret: only a browser signed in to this console (its cookie) is led on to the approval's page.
   */
  approveUrl(a: ConsoleApproval): string;
  /** True when a passkey is enrolled (approvers.json, read afresh): approving here then needs one. */
  passkeysEnrolled(): Promise<boolean>;
  /** A new approval is waiting: opens the console in the browser unless a console page is open. */
  announce(a: ConsoleApproval): void;
  close(): Promise<void>;
}

export interface ApprovalConsoleOptions {
  runner: Runner;
  /** The audit log, for the recent-calls view (opened on first need). */
  audit: () => Promise<CallLog>;
  log: Logger;
  /** Opens a URL in the person's browser; omit to never open one (tests, `console_open_browser: false`). */
  openBrowser?: (url: string) => void;
  now?: () => number;
  /** The passkeys that approve (none enrolled: a click approves); omit for a console without passkeys. */
  approvers?: ApproverStore;
}

/** An open console page re-fetches itself every 2 s: one seen this recently counts as open (no new tab). */
const PAGE_OPEN_MS = 6_000;
/** At most one browser tab per this long, however many approvals arrive. */
const OPEN_EVERY_MS = 30_000;

/** Starts the console's listener on 127.0.0.1 with a fresh secret. */
export async function startApprovalConsole(opts: ApprovalConsoleOptions): Promise<ApprovalConsole> {
  const { log } = opts;
  const now = opts.now ?? Date.now;
  const secret = randomBytes(32).toString('base64url');
  const base = `/${secret}`;
  const queue = createApprovalQueue({ runner: opts.runner, log, now });
  const shared = createSharedApprovals({ runner: opts.runner, audit: opts.audit, log, now });
  const passkeys =
    opts.approvers === undefined ? undefined : createConsolePasskeys({ store: opts.approvers, log });
  let origin = '';
  let lastView = -Infinity;
  let lastOpen = -Infinity;
  const server = await startConsoleServer({
    secret,
    log,
    route: (req) =>
      routeConsole(req, {
        base,
        queue,
        shared,
        audit: opts.audit,
        log,
        pendingView: (callId) => opts.runner.pendingView(callId),
        onPageView: () => (lastView = now()),
        ...(passkeys === undefined ? {} : { passkeys, origin: () => origin }),
      }),
  });
  origin = new URL(server.url).origin.replace('//127.0.0.1:', '//localhost:');
  const approvalUrl = (a: ConsoleApproval) => `${server.url}approvals/${a.id}`;
  return {
    url: server.url,
    queue,
    approveUrl: (a) => `${new URL(server.url).origin}/approve/${a.id}`,
    passkeysEnrolled: async () => (await passkeys?.enrolled()) === true,
    announce(a) {
      const t = now();
      if (opts.openBrowser === undefined || t - lastView < PAGE_OPEN_MS || t - lastOpen < OPEN_EVERY_MS)
        return;
      lastOpen = t;
      opts.openBrowser(approvalUrl(a));
    },
    async close() {
      queue.close();
      await server.close();
    },
  };
}
