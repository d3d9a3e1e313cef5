import { constants, fstatSync, openSync, readFileSync, closeSync } from 'node:fs';
import {
  ResourceNotFoundError,
  ResourceTemplate,
  type ReadResourceResult,
} from '@modelcontextprotocol/server';
import { isSkillsError, SkillsError } from '../../errors.js';
import type { Runner } from '../../runner/runner-types.js';
import type { SessionInfo } from '../../runner/session.js';
import { mimeTypeOf } from '../skill-uri.js';

export const MAX_ARTIFACT_READ_BYTES = 5 * 1024 * 1024;

/** Reads an artifact without following links (a run may have replaced its file with one after collection). */
export function readArtifact(abs: string): Buffer {
  const fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const st = fstatSync(fd);
    if (!st.isFile() || st.nlink > 1)
      throw new SkillsError('PATH_INVALID', 'the artifact is not a plain file');
    if (st.size > MAX_ARTIFACT_READ_BYTES) {
      throw new SkillsError(
        'FILE_TOO_LARGE',
        `the artifact is ${st.size} bytes; the limit is ${MAX_ARTIFACT_READ_BYTES}`,
      );
    }
    return readFileSync(fd);
  } finally {
    closeSync(fd);
  }
}

const one = (v: string | string[] | undefined): string =>
  decodeURIComponent(Array.isArray(v) ? v.join('/') : (v ?? ''));

/** `skill-run://<call>/<path>`: files a run wrote, readable only by the session that made the call. */
export const runArtifactsResource = (runner: Runner, session: SessionInfo) => ({
  name: 'run-artifacts',
  template: new ResourceTemplate('skill-run://{call}/{+path}', { list: undefined }),
  config: { title: 'Run artifacts', description: 'A file written by a skill run in this session.' },
  read: (uri: URL, vars: Record<string, string | string[]>): ReadResourceResult => {
    try {
      const abs = runner.artifactPath(session, one(vars.call), one(vars.path));
      if (abs === undefined) throw new SkillsError('FILE_NOT_FOUND', 'no such run in this session');
      const data = readArtifact(abs);
      const mimeType = mimeTypeOf(abs);
      const text = /^text\/|json|yaml|xml/.test(mimeType) && !data.includes(0);
      return {
        contents: [
          text
            ? { uri: uri.href, mimeType, text: data.toString('utf8') }
            : { uri: uri.href, mimeType, blob: data.toString('base64') },
        ],
      };
    } catch (err) {
      if (isSkillsError(err) || (err as NodeJS.ErrnoException).code !== undefined) {
        throw new ResourceNotFoundError(
          uri.href,
          'no such artifact in this session (it may belong to another session, or to a run before a restart)',
        );
      }
      throw err;
    }
  },
});
