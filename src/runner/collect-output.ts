import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { isRecordablePath } from '../audit/call-payload-schemas.js';
import { isSkillsError } from '../errors.js';
import {
  closeNode,
  listNames,
  openChild,
  openFolder,
  readChunks,
  readNodeFully,
  refusalOf,
  type FolderId,
  type Node,
} from '../sandbox/output-folder.js';
import { parseBoundedJson, type JsonLimits, DEFAULT_JSON_LIMITS } from './parse-bounded-json.js';

export interface Artifact {
  /** POSIX path relative to the call's files folder. */
  path: string;
  /** Host path, for people (`skills-mcp run` prints it). The server never reads through it. */
  abs: string;
  sha256: string;
  bytes: number;
  /** The bytes read at collection, for files up to `keepBytes` (embedded in the result; never re-read). */
  content?: Buffer;
}

/** A call's output folder and its `files` folder, with the identity each had when the server created it. */
export interface OutputFolders {
  outDir: string;
  filesDir: string;
  out: FolderId;
  files: FolderId;
}

export interface LeftOut {
  /** The first entries left out, with the reason (at most `maxListed`). */
  listed: { path: string; reason: string }[];
  /** How many entries were left out in all, per reason. */
  counts: Record<string, number>;
  total: number;
}

export interface CollectedOutput {
  /** Parsed JSON result, when the script produced one within the caps. */
  json?: unknown;
  /** Where the result came from (output.json, else JSON on stdout, else plain stdout). */
  source: 'output.json' | 'stdout-json' | 'stdout-text';
  /** Set when output.json exists but was not used: what was wrong or exceeded. The call is then an error. */
  outputError?: string;
  artifacts: Artifact[];
  leftOut: LeftOut;
  /** sha256 of names the audit log cannot hold (absolute-looking, `..` in any form, not UTF-8): recorded as refused. */
  refusedNames: string[];
}

export interface CollectLimits {
  maxOutputJsonBytes: number;
  /** Files collected. */
  maxArtifacts: number;
  maxArtifactBytes: number;
  /** Bytes over all collected files. */
  maxTotalBytes: number;
  /** Names looked at (files, folders and everything else), so a million empty files cost little. */
  maxEntries: number;
  /** Folder depth under `files/`. */
  maxDepth: number;
  /** Entries named in the "left out" summary; the rest are counted. */
  maxListed: number;
  /** Files up to this size keep their bytes for the result. */
  keepBytes: number;
  json: JsonLimits;
}

export const DEFAULT_COLLECT_LIMITS: CollectLimits = {
  maxOutputJsonBytes: 8 << 20,
  maxArtifacts: 100,
  maxArtifactBytes: 64 << 20,
  maxTotalBytes: 128 << 20,
  maxEntries: 1000,
  maxDepth: 16,
  maxListed: 20,
  keepBytes: 32 << 10,
  json: DEFAULT_JSON_LIMITS,
};

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

/**
 * Collects a finished run's result and artifacts from its output folder, through `output-folder.ts`: never
 * following a link the script left, reading only regular single-link files, within count, size and depth caps.
 */
export async function collectOutput(
  folders: OutputFolders,
  stdout: string,
  limits: CollectLimits = DEFAULT_COLLECT_LIMITS,
): Promise<CollectedOutput> {
  const leftOut: LeftOut = { listed: [], counts: {}, total: 0 };
  const leave = (path: string, reason: string) => {
    leftOut.total++;
    leftOut.counts[reason] = (leftOut.counts[reason] ?? 0) + 1;
    if (leftOut.listed.length < limits.maxListed) leftOut.listed.push({ path, reason });
  };
  const out: CollectedOutput = { source: 'stdout-text', artifacts: [], leftOut, refusedNames: [] };
  let root: Node;
  try {
    root = openFolder(folders.outDir, folders.out);
  } catch (e) {
    if (!isSkillsError(e)) throw e;
    leave('.', e.message);
    return out;
  }
  try {
    readResult(root, out, leave, limits);
    if (out.source === 'stdout-text' && out.outputError === undefined && stdout.trim() !== '') {
      const r = parseBoundedJson(stdout, limits.json);
      if (r.ok) Object.assign(out, { json: r.json, source: 'stdout-json' });
    }
    const files = openChild(root, 'files');
    if (typeof files === 'string') {
      leave('files', files);
      return out;
    }
    try {
      if (files.st.dev !== folders.files.dev || files.st.ino !== folders.files.ino) {
        leave('files', 'the folder was replaced after the server created it');
      } else await walk(files, '', 1, folders.filesDir, out, leave, limits);
    } finally {
      closeNode(files);
    }
  } finally {
    closeNode(root);
  }
  return out;
}

function readResult(
  root: Node,
  out: CollectedOutput,
  leave: (path: string, reason: string) => void,
  limits: CollectLimits,
): void {
  const n = openChild(root, 'output.json');
  if (n === 'missing') return;
  const refuse = (reason: string) => {
    // Plain invalid JSON falls back to stdout as before; a link, a special file or a cap makes the call an error.
    if (reason !== 'not valid JSON') out.outputError = `output.json was not used: ${reason}`;
    leave('output.json', reason);
  };
  if (n === 'symlink') return refuse('symlink');
  try {
    const why =
      refusalOf(n) ??
      (n.st.size > limits.maxOutputJsonBytes ? `larger than ${limits.maxOutputJsonBytes} bytes` : undefined);
    const r =
      why === undefined
        ? parseBoundedJson(readNodeFully(n, limits.maxOutputJsonBytes).toString('utf8'), limits.json)
        : { ok: false as const, reason: why };
    if (r.ok) Object.assign(out, { json: r.json, source: 'output.json' });
    else refuse(r.reason);
  } catch (e) {
    if (!isSkillsError(e)) throw e;
    refuse(e.message);
  } finally {
    closeNode(n);
  }
}

/** Lets other sessions' requests run between chunks of a large file. */
const yieldToLoop = () => new Promise<void>((r) => setImmediate(r));

async function walk(
  dir: Node,
  rel: string,
  depth: number,
  abs: string,
  out: CollectedOutput,
  leave: (path: string, reason: string) => void,
  limits: CollectLimits,
  seen = { entries: 0, bytes: 0 },
): Promise<void> {
  const { names, notUtf8, more } = listNames(dir, limits.maxEntries - seen.entries);
  seen.entries += names.length + notUtf8.length;
  if (more) leave(rel === '' ? '…' : `${rel}/…`, `more than ${limits.maxEntries} entries (not looked at)`);
  for (const raw of notUtf8) {
    const path = Buffer.concat([Buffer.from(rel === '' ? '' : `${rel}/`), raw]);
    out.refusedNames.push(createHash('sha256').update(path).digest('hex'));
    leave(path.toString('utf8'), 'name not valid UTF-8');
  }
  for (const name of names) {
    const path = rel === '' ? name : `${rel}/${name}`;
    const n = openChild(dir, name);
    if (typeof n === 'string') {
      leave(path, n === 'symlink' ? 'symlink' : 'vanished or unreadable name');
      continue;
    }
    try {
      if (n.st.isDirectory()) {
        if (depth >= limits.maxDepth) leave(path, `deeper than ${limits.maxDepth} folders`);
        else await walk(n, path, depth + 1, join(abs, name), out, leave, limits, seen);
        continue;
      }
      const why = refusalOf(n);
      if (why !== undefined) {
        leave(path, why);
        continue;
      }
      if (!isRecordablePath(path)) {
        out.refusedNames.push(sha256(path));
        leave(path, 'name not allowed');
        continue;
      }
      if (out.artifacts.length >= limits.maxArtifacts) {
        leave(path, `more than ${limits.maxArtifacts} files`);
        continue;
      }
      if (n.st.size > limits.maxArtifactBytes) {
        leave(path, `larger than ${limits.maxArtifactBytes} bytes`);
        continue;
      }
      if (seen.bytes + n.st.size > limits.maxTotalBytes) {
        leave(path, `over ${limits.maxTotalBytes} bytes in all`);
        continue;
      }
      const h = createHash('sha256');
      const kept: Buffer[] = [];
      let bytes = 0;
      for (const c of readChunks(n, n.st.size)) {
        h.update(c);
        bytes += c.length;
        if (n.st.size <= limits.keepBytes) kept.push(c);
        else await yieldToLoop();
      }
      seen.bytes += bytes;
      out.artifacts.push({
        path,
        abs: join(abs, name),
        sha256: h.digest('hex'),
        bytes,
        ...(n.st.size <= limits.keepBytes ? { content: Buffer.concat(kept) } : {}),
      });
    } catch (e) {
      if (!isSkillsError(e)) throw e;
      leave(path, e.message);
    } finally {
      closeNode(n);
    }
  }
}
