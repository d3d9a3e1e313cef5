import { rmSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Config } from '../config/config-schema.js';
import type { ApprovalConsole } from '../console/index.js';
import type { Logger } from '../log.js';
import type { Services } from './create-services.js';
import type { CliIo } from './io.js';

/** A person is likely at this machine's screen: macOS, Windows, or a Linux/BSD graphical session. */
export function isDesktopSession(env: NodeJS.ProcessEnv, platform: NodeJS.Platform): boolean {
  if (platform === 'darwin' || platform === 'win32') return true;
  return Boolean(env.DISPLAY) || Boolean(env.WAYLAND_DISPLAY);
}

/** Whether `approval.console` turns the console on here (`auto`: when a desktop session is detected). */
export function consoleEnabled(config: Config, io: CliIo, platform: NodeJS.Platform): boolean {
  const c = config.approval.console;
  return c === 'auto' ? isDesktopSession(io.env, platform) : c;
}

/**
 * Starts the approval console when the config asks for it. Its URL is the credential: it goes only into a private
 * file in the state folder (`skills-mcp console` prints it; the browser is opened on a file that forwards to it),
 * never into a log line.
 */
export async function startConsoleIfEnabled(
  config: Config,
  log: Logger,
  io: CliIo,
  services: Services,
): Promise<{ console: ApprovalConsole; close: () => Promise<void> } | undefined> {
  if (!consoleEnabled(config, io, process.platform)) return undefined;
  // Loaded only when the console is on: it stays off the start-up path otherwise.
  const { createBrowserOpener, startApprovalConsole, writeLinkFile } = await import('../console/index.js');
  const stateDir = dirname(services.auditPath);
  const opener = config.approval.console_open_browser
    ? createBrowserOpener({ log, platform: process.platform, stateDir })
    : undefined;
  const { openApproverStore } = await import('./open-approver-store.js');
  const approvers = await openApproverStore(config, io, stateDir, log);
  const con = await startApprovalConsole({
    runner: services.runner,
    audit: services.audit,
    log,
    approvers: approvers.store,
    ...(opener === undefined ? {} : { openBrowser: (url: string) => opener.open(url) }),
  });
  let linkFile: string | undefined;
  try {
    linkFile = writeLinkFile(stateDir, String(process.pid), con.url);
  } catch (err) {
    log.warn(
      { err },
      'could not write the approval console link file: `skills-mcp console` will not find it',
    );
  }
  log.info({ command: 'skills-mcp console' }, 'approval console ready');
  return {
    console: con,
    close: async () => {
      await con.close();
      await approvers.close();
      opener?.dispose();
      if (linkFile !== undefined) rmSync(linkFile, { force: true });
    },
  };
}
