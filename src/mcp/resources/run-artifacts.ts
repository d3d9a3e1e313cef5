import {
  ResourceNotFoundError,
  ResourceTemplate,
  type ReadResourceResult,
} from '@modelcontextprotocol/server';
import { isSkillsError, SkillsError } from '../../errors.js';
import { readRecordedArtifact } from '../../runner/read-artifact.js';
import type { Runner } from '../../runner/runner-types.js';
import type { SessionInfo } from '../../runner/session.js';
import { mimeTypeOf } from '../skill-uri.js';

export const MAX_ARTIFACT_READ_BYTES = 5 * 1024 * 1024;

/** A URI variable, percent-decoded; undefined when its escapes are not UTF-8 (`%ff`), which names no artifact. */
const one = (v: string | string[] | undefined): string | undefined => {
  try {
    return decodeURIComponent(Array.isArray(v) ? v.join('/') : (v ?? ''));
  } catch {
    return undefined;
  }
};

/**
 * `skill-run://<call>/<path>`: a file collected from a run of this session, served only as collected (same digest),
 * never any other path under the run's folder.
 */
export const runArtifactsResource = (runner: Runner, session: SessionInfo) => ({
  name: 'run-artifacts',
  template: new ResourceTemplate('skill-run://{call}/{+path}', { list: undefined }),
  config: { title: 'Run artifacts', description: 'A file written by a skill run in this session.' },
  read: (uri: URL, vars: Record<string, string | string[]>): ReadResourceResult => {
    try {
      const call = one(vars.call);
      const path = one(vars.path);
      const recorded =
        call === undefined || path === undefined ? undefined : runner.artifact(session, call, path);
      if (recorded === undefined) throw new SkillsError('FILE_NOT_FOUND', 'no such artifact in this session');
      const data = readRecordedArtifact(recorded, MAX_ARTIFACT_READ_BYTES);
      const mimeType = mimeTypeOf(recorded.path);
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
