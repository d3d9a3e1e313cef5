import { createHash } from 'node:crypto';
import { SkillsError } from '../errors.js';
import {
  closeNode,
  openChild,
  openFolder,
  readNodeFully,
  refusalOf,
  type Node,
} from '../sandbox/output-folder.js';
import type { OutputFolders } from './collect-output.js';

/** A file as collected at the end of its run: where it was, and the digest and size recorded then. */
export interface RecordedArtifact {
  path: string;
  sha256: string;
  bytes: number;
  folders: OutputFolders;
}

const gone = (why: string) =>
  new SkillsError('FILE_NOT_FOUND', `the file is no longer as the run left it (${why})`);

/**
 * Reads a collected artifact again, for `skill-run://`: from the folders the server created (same device and
 * inode), one component at a time without following links, and only if the bytes still have the digest recorded
 * when the run was collected. A folder a process could still write is never trusted: whatever is served is, byte
 * for byte, what was collected and audited, or nothing.
 */
export function readRecordedArtifact(a: RecordedArtifact, maxBytes: number): Buffer {
  if (a.bytes > maxBytes) {
    throw new SkillsError('FILE_TOO_LARGE', `the artifact is ${a.bytes} bytes; the limit is ${maxBytes}`);
  }
  const opened: Node[] = [];
  try {
    let cur = openFolder(a.folders.outDir, a.folders.out);
    opened.push(cur);
    const files = openChild(cur, 'files');
    if (typeof files === 'string') throw gone(`files folder: ${files}`);
    opened.push(files);
    if (files.st.dev !== a.folders.files.dev || files.st.ino !== a.folders.files.ino)
      throw gone('the files folder was replaced');
    cur = files;
    for (const name of a.path.split('/')) {
      const next = openChild(cur, name);
      if (typeof next === 'string') throw gone(next);
      opened.push(next);
      cur = next;
    }
    const why = refusalOf(cur);
    if (why !== undefined) throw gone(why);
    if (cur.st.size !== a.bytes) throw gone('its size changed');
    const data = readNodeFully(cur, a.bytes);
    if (createHash('sha256').update(data).digest('hex') !== a.sha256) throw gone('its content changed');
    return data;
  } finally {
    for (const n of opened) closeNode(n);
  }
}
