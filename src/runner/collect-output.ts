import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFile,
  readFileSync,
} from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';

export interface Artifact {
  /** POSIX path relative to the call's files folder. */
  path: string;
  /** Host path (inside the call's output folder). */
  abs: string;
  sha256: string;
  bytes: number;
}

export interface CollectedOutput {
  /** Parsed JSON result, when the script produced one. */
  json?: unknown;
  /** Where the result came from (DESIGN §9 precedence). */
  source: 'output.json' | 'stdout-json' | 'stdout-text';
  artifacts: Artifact[];
  /** Entries left out: symlinks, hard links, special files, over-limit files. */
  refused: { path: string; reason: string }[];
}

export interface CollectLimits {
  maxOutputJsonBytes: number;
  maxArtifacts: number;
  maxArtifactBytes: number;
}

export const DEFAULT_COLLECT_LIMITS: CollectLimits = {
  maxOutputJsonBytes: 8 << 20,
  maxArtifacts: 100,
  maxArtifactBytes: 64 << 20,
};

/**
 * Reads a regular file without following links: O_NOFOLLOW refuses a symlink at the last component, fstat refuses
 * anything that is not a regular file with a single link (a hard link could alias a host file).
 */
const readFd = promisify(readFile) as (fd: number) => Promise<Buffer>;

/** Files up to this size are read synchronously (cheaper than a thread-pool round trip); larger ones are not. */
const SYNC_READ_BYTES = 1 << 20;

async function readPlainFile(path: string, maxBytes: number): Promise<Buffer | string> {
  let fd;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ELOOP' ? 'symlink' : 'unreadable';
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) return 'not a regular file';
    if (st.nlink > 1) return 'hard link';
    if (st.size > maxBytes) return `over ${maxBytes} bytes`;
    return st.size <= SYNC_READ_BYTES ? readFileSync(fd) : await readFd(fd);
  } finally {
    closeSync(fd);
  }
}

/** Collects a finished run's result and artifacts from its output folder. Never follows a link the script left. */
export async function collectOutput(
  outDir: string,
  filesDir: string,
  stdout: string,
  limits = DEFAULT_COLLECT_LIMITS,
): Promise<CollectedOutput> {
  const refused: CollectedOutput['refused'] = [];
  let json: unknown;
  let source: CollectedOutput['source'] = 'stdout-text';
  const outFile = await readPlainFile(join(outDir, 'output.json'), limits.maxOutputJsonBytes);
  if (typeof outFile === 'string') {
    if (outFile !== 'unreadable') refused.push({ path: 'output.json', reason: outFile });
  } else {
    try {
      json = JSON.parse(outFile.toString('utf8'));
      source = 'output.json';
    } catch {
      refused.push({ path: 'output.json', reason: 'not valid JSON' });
    }
  }
  if (source === 'stdout-text' && stdout.trim() !== '') {
    try {
      json = JSON.parse(stdout);
      source = 'stdout-json';
    } catch {
      // plain text output
    }
  }
  const artifacts: Artifact[] = [];
  const walk = async (dir: string, rel: string): Promise<void> => {
    let entries;
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : 1));
    for (const e of entries) {
      const childRel = rel === '' ? e.name : `${rel}/${e.name}`;
      const abs = join(dir, e.name);
      const st = lstatSync(abs);
      if (st.isDirectory()) {
        await walk(abs, childRel);
        continue;
      }
      if (artifacts.length >= limits.maxArtifacts) {
        refused.push({ path: childRel, reason: `more than ${limits.maxArtifacts} files` });
        continue;
      }
      const data = st.isSymbolicLink() ? 'symlink' : await readPlainFile(abs, limits.maxArtifactBytes);
      if (typeof data === 'string') refused.push({ path: childRel, reason: data });
      else
        artifacts.push({
          path: childRel,
          abs,
          bytes: data.length,
          sha256: createHash('sha256').update(data).digest('hex'),
        });
    }
  };
  await walk(filesDir, '');
  return { ...(json === undefined ? {} : { json }), source, artifacts, refused };
}
