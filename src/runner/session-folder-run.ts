import { removeTree } from '../sandbox/remove-tree.js';
import type { Config } from '../config/config-schema.js';
import type { Logger } from '../log.js';
import type { Sandbox } from '../sandbox/create-sandbox.js';
import type { PreparedCall } from './prepare-call.js';
import { isWithin, measureSessionFolder, prepareSessionFolder, type FolderUse } from './session-folder.js';

/** What the session folder of a run needs of the runner (a part of `ExecuteDeps`). */
export interface SessionFolderDeps {
  config: Config;
  runsDir: string;
  sandbox: Pick<Sandbox, 'folderOwner'>;
  log?: Logger;
}

/** A session folder found over a cap after a run: what it held (counted up to the cap) and the caps. */
export interface SessionFolderCheck extends FolderUse {
  maxBytes: number;
  maxFiles: number;
}

/** The session's working folder for this run (made on first need), or undefined when the operator turned it off. */
export function sessionFolderOf(call: PreparedCall, deps: SessionFolderDeps): string | undefined {
  if (!deps.config.runs.session_folder.enabled) return undefined;
  return prepareSessionFolder(deps.runsDir, call.req.session, deps.sandbox.folderOwner);
}

/**
 * After a run: the session folder within its caps → undefined. Over one (or holding what the server will not walk)
 * → the folder is emptied, so a session can never hold more than its caps for longer than one run.
 */
export async function checkSessionFolder(
  dir: string,
  deps: Pick<SessionFolderDeps, 'config' | 'log'>,
): Promise<SessionFolderCheck | undefined> {
  const { max_bytes: maxBytes, max_files: maxFiles } = deps.config.runs.session_folder;
  const caps = { maxBytes, maxFiles };
  let use: FolderUse;
  try {
    use = measureSessionFolder(dir, caps);
  } catch {
    use = { bytes: 0, files: 0, refused: 'a folder the server could not read' };
  }
  if (isWithin(use, caps)) return undefined;
  deps.log?.warn(
    { ...caps, files: use.files, bytes: use.bytes },
    'a session folder went over its caps: emptied',
  );
  await removeTree(dir);
  return { ...use, ...caps };
}

/** The line of the result that says why the run is an error, and what to change. */
export function sessionFullText(c: SessionFolderCheck): string {
  const what =
    c.refused !== undefined
      ? `holds ${c.refused}`
      : c.bytes > c.maxBytes
        ? `holds more than ${c.maxBytes} bytes (runs.session_folder.max_bytes)`
        : `holds more than ${c.maxFiles} entries (runs.session_folder.max_files)`;
  return (
    `SESSION_FOLDER_FULL: after this run the session folder ($SKILL_SESSION_DIR) ${what}, so everything in it ` +
    'was deleted. Keep less there (write large or passing results to $SKILL_FILES_DIR, which comes back with the ' +
    'result), or ask the operator to raise the cap in skills-mcp.yaml.'
  );
}
