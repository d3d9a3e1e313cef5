import {
  ResourceNotFoundError,
  ResourceTemplate,
  type ReadResourceResult,
  type Resource,
} from '@modelcontextprotocol/server';
import { existsSync } from 'node:fs';
import { isSkillsError } from '../../errors.js';
import { listSessionFiles, readSessionFile, sessionFolderPath } from '../../runner/session-folder.js';
import type { SessionInfo } from '../../runner/session.js';
import { mimeTypeOf } from '../skill-uri.js';
import { MAX_ARTIFACT_READ_BYTES } from './run-artifacts.js';

export const SESSION_URI_PREFIX = 'skill-session://files/';
/** Files listed at most: a listing stays small whatever a script left. */
const MAX_LISTED = 1000;

const encode = (path: string) => path.split('/').map(encodeURIComponent).join('/');

/**
 * `skill-session://files/<path>`: the files of this session's working folder ($SKILL_SESSION_DIR) as its runs left
 * them, listed and read only for the session they belong to (the folder is named after the asking session, never
 * after anything in the URI). Links, FIFOs and hard links a script made are neither listed nor followed.
 */
export const sessionFilesResource = (runsDir: string, session: SessionInfo) => {
  const dir = sessionFolderPath(runsDir, session);
  const list = (): Resource[] => {
    if (!existsSync(dir)) return [];
    try {
      return listSessionFiles(dir, MAX_LISTED).map((f) => ({
        uri: `${SESSION_URI_PREFIX}${encode(f.path)}`,
        name: `session/${f.path}`,
        mimeType: mimeTypeOf(f.path),
        size: f.bytes,
      }));
    } catch {
      return [];
    }
  };
  return {
    name: 'session-files',
    template: new ResourceTemplate(`${SESSION_URI_PREFIX}{+path}`, {
      list: () => ({ resources: list() }),
    }),
    config: {
      title: 'Session folder',
      description:
        "A file in this session's working folder ($SKILL_SESSION_DIR), as the session's runs left it.",
    },
    read: (uri: URL, vars: Record<string, string | string[]>): ReadResourceResult => {
      try {
        const raw = Array.isArray(vars.path) ? vars.path.join('/') : (vars.path ?? '');
        const path = decodeURIComponent(raw);
        const data = readSessionFile(dir, path, MAX_ARTIFACT_READ_BYTES);
        const mimeType = mimeTypeOf(path);
        const text = /^text\/|json|yaml|xml/.test(mimeType) && !data.includes(0);
        return {
          contents: [
            text
              ? { uri: uri.href, mimeType, text: data.toString('utf8') }
              : { uri: uri.href, mimeType, blob: data.toString('base64') },
          ],
        };
      } catch (err) {
        if (
          isSkillsError(err) ||
          err instanceof URIError ||
          (err as NodeJS.ErrnoException).code !== undefined
        ) {
          throw new ResourceNotFoundError(uri.href, "no such file in this session's folder");
        }
        throw err;
      }
    },
  };
};
