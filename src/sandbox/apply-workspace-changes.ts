import { createHash } from 'node:crypto';
import { readdirSync, readlinkSync, readSync, realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { CopiedFile, WorkspaceCopy } from './copy-workspace.js';
import { MAX_WORKSPACE_BYTES, MAX_WORKSPACE_FILES } from './copy-workspace.js';
import { at, closeHeld, isName, lookAt, openFolderAt, openFolderPath, openHeld, type Held } from './fd-at.js';
import { neverApplied } from './never-applied.js';
import type { ApplyRefusal } from './serve-workspace-worker.js';
import type { WorkspaceChanges } from './types.js';

type Change = { kind: 'write'; rel: string } | { kind: 'delete'; rel: string };
const MAX_DEPTH = 64;
/** Below PATH_MAX (4096), for the host path and the copy's. */
const MAX_PATH_BYTES = 4000;

/**
 * A file executable on the host is never rewritten: git runs a hook from a `core.hooksPath` folder in the worktree
 * (husky, `.githooks/`) only when it is executable, and a rewrite keeps the mode.
 */
const executable = (f: CopiedFile): string | undefined =>
  (f.mode & 0o111) === 0
    ? undefined
    : 'executable on the host (a hook or program the host may run): never rewritten';

const namesOf = (dir: Held): string[] => {
  const raw = readdirSync(`/proc/self/fd/${dir.fd}`, { encoding: 'buffer' });
  return raw
    .map((b) => b.toString('utf8'))
    .filter((n, i) => Buffer.from(n).equals(raw[i]!) && isName(n))
    .sort();
};

/** The copy's folder, opened through real folders only and checked to be the one the copy made. */
function openCopy(ws: WorkspaceCopy): Held {
  const top = openFolderPath(ws.dir);
  if (top === undefined || top.st.dev !== BigInt(ws.dirId.dev) || top.st.ino !== BigInt(ws.dirId.ino)) {
    closeHeld(top);
    throw new Error('the workspace copy was replaced');
  }
  return top;
}

/**
 * What the script changed in its copy. The copy is hostile (the sandbox user made it, and other processes of that
 * user may still change it): the walk goes through folder fds, never follows a link, and stops at the copy's limits.
 */
function diffCopy(ws: WorkspaceCopy, refused: WorkspaceChanges['refused']): Change[] {
  const changes: Change[] = [];
  const seen = new Set<string>();
  let entries = 0;
  const walk = (dir: Held, rel: string, depth: number): void => {
    for (const name of namesOf(dir)) {
      const r = rel === '' ? name : `${rel}/${name}`;
      if (++entries > MAX_WORKSPACE_FILES * 2 || depth > MAX_DEPTH) {
        refused.push({ path: r, reason: 'past the limits of a workspace copy' });
        return;
      }
      if (Buffer.byteLength(r) > MAX_PATH_BYTES) {
        refused.push({ path: r, reason: 'path too long' });
        continue;
      }
      const l = lookAt(dir.fd, name);
      if (l === undefined) continue;
      try {
        const st = l.st;
        // The read-only mount point of the real .git, still empty.
        if (r === '.git' && ws.git !== undefined && st.isDirectory()) {
          const g = openHeld(l);
          const empty = g !== undefined && namesOf(g).length === 0;
          closeHeld(g);
          if (empty) continue;
        }
        const before = ws.files.get(r);
        if (st.isFile()) seen.add(r);
        if (st.isDirectory()) {
          const d = openHeld(l);
          if (d === undefined) continue;
          try {
            walk(d, r, depth + 1);
          } finally {
            closeHeld(d);
          }
        } else if (!st.isFile()) {
          const copied = st.isSymbolicLink() && ws.links.get(r) === readlinkSync(at(dir.fd, name));
          if (!copied) refused.push({ path: r, reason: 'not a regular file' });
        } else if (st.nlink !== 1n) {
          refused.push({ path: r, reason: 'a hard link' });
        } else if (
          before?.copy.ino !== st.ino ||
          before.copy.timeNs !== st.ctimeNs ||
          before.copy.size !== st.size
        ) {
          const why = neverApplied(r) ?? (before !== undefined ? executable(before) : undefined);
          if (why === undefined) changes.push({ kind: 'write', rel: r });
          else refused.push({ path: r, reason: why });
        }
      } finally {
        closeHeld(l);
      }
    }
  };
  const top = openCopy(ws);
  try {
    walk(top, '', 0);
  } finally {
    closeHeld(top);
  }
  for (const rel of ws.files.keys()) {
    if (seen.has(rel) || refused.some((x) => x.path === rel)) continue;
    const why = neverApplied(rel);
    if (why === undefined) changes.push({ kind: 'delete', rel });
    else refused.push({ path: rel, reason: why });
  }
  return changes;
}

/** The content of a changed file of the copy, read from the fd that was checked (a single-link regular file). */
function readChanged(ws: WorkspaceCopy, rel: string, max: number): Buffer | undefined {
  const parts = rel.split('/');
  const name = parts.pop()!;
  const held: Held[] = [openCopy(ws)];
  try {
    for (const p of parts) {
      const next = openFolderAt(held.at(-1)!.fd, p);
      if (next === undefined) return undefined;
      held.push(next);
    }
    const l = lookAt(held.at(-1)!.fd, name);
    if (l === undefined) return undefined;
    held.push(l);
    if (!l.st.isFile() || l.st.nlink !== 1n || l.st.size > BigInt(max)) return undefined;
    const o = openHeld(l);
    if (o === undefined) return undefined;
    held.push(o);
    const buf = Buffer.allocUnsafe(Number(o.st.size));
    let got = 0;
    while (got < buf.length) {
      const n = readSync(o.fd, buf, got, buf.length - got, got);
      if (n === 0) break;
      got += n;
    }
    return buf.subarray(0, got);
  } finally {
    for (const h of held) closeHeld(h);
  }
}

const REFUSALS: Record<ApplyRefusal, string> = {
  changed: 'changed on the host during the run',
  parent: 'a parent folder on the host is not a plain folder',
  error: 'could not apply',
};

const identity = (f: CopiedFile | undefined) =>
  f === undefined
    ? null
    : { ino: String(f.host.ino), size: String(f.host.size), mtimeNs: String(f.host.timeNs) };

/** Real paths of the server's own paths (an SQLite log with its -wal, -shm and -journal files). */
function serverPaths(protect: readonly string[]): string[] {
  return protect.flatMap((p) => {
    let real: string;
    try {
      real = realpathSync(p);
    } catch {
      // Not there yet (an audit log before its first write): its parent is real, the name is kept.
      try {
        real = join(realpathSync(dirname(p)), p.slice(dirname(p).length + 1));
      } catch {
        real = resolve(p);
      }
    }
    return [real, ...['-wal', '-shm', '-journal'].map((s) => real + s)];
  });
}

/** Whether `rel` is, or lies below, a path the copy left out because the sandbox user could not read it. */
const isLeftOut = (ws: WorkspaceCopy, rel: string) =>
  [...ws.leftOut].some((p) => rel === p || rel.startsWith(`${p}/`));

const isUnder = (path: string, roots: readonly string[]) =>
  roots.some((r) => path === r || path.startsWith(`${r}/`));

/** What `applyWorkspaceChanges` does with the changes it accepts. */
export interface ApplyOptions {
  /** False: nothing reaches the host; the result lists what would have changed (a failed run). Default true. */
  apply?: boolean;
  /** Called with each file the run wrote (as it is in the copy), whether it is applied or not. */
  keep?: (rel: string, content: Buffer) => void;
}

/**
 * Applies what the script changed in its private copy to the host workspace: regular files only, never below
 * `.git` or another host-interpreted path (`never-applied.ts`), never through a symlink, never over a file that
 * changed on the host since the copy was made, never over a file executable on the host. Modes are kept (new files
 * are 0644); on a root server, files keep their owner and new ones take their folder's. Never changes the server's
 * own paths (`protect`: skills folders, audit log, sandbox profiles) when they lie in the workspace: a run could
 * otherwise rewrite the code of the next one, or the record of its own. Runs after every process of the run has
 * exited. The host side is done by the worker that made the copy, with the workspace owner's identity, fd-relative
 * from the workspace folder as it was copied (`serve-workspace-worker.ts`); this side only reads the copy, through
 * fds. Ends the worker.
 */
export async function applyWorkspaceChanges(
  ws: WorkspaceCopy,
  owner: boolean,
  protect: readonly string[] = [],
  opts: ApplyOptions = {},
): Promise<WorkspaceChanges> {
  const apply = opts.apply ?? true;
  const result: WorkspaceChanges = {
    written: [],
    digests: new Map(),
    deleted: [],
    refused: [],
    applied: apply,
  };
  const own = serverPaths(protect);
  let bytes = 0;
  const accepted: Array<{ c: Change; content?: Buffer }> = [];
  for (const c of diffCopy(ws, result.refused)) {
    const target = join(ws.root, c.rel);
    if (isUnder(target, own)) {
      result.refused.push({ path: c.rel, reason: 'the server reads it (skills, audit log or profiles)' });
    } else if (isLeftOut(ws, c.rel)) {
      result.refused.push({ path: c.rel, reason: 'the sandbox user may not read it on the host' });
    } else if (c.kind === 'delete') {
      accepted.push({ c });
    } else if (bytes > MAX_WORKSPACE_BYTES) {
      result.refused.push({ path: c.rel, reason: 'past the size limit of a workspace copy' });
    } else {
      const content = readChanged(ws, c.rel, MAX_WORKSPACE_BYTES - bytes);
      if (content === undefined) {
        result.refused.push({ path: c.rel, reason: 'not a regular file' });
        continue;
      }
      bytes += content.length;
      opts.keep?.(c.rel, content);
      accepted.push({ c, content });
    }
  }
  const done = (c: Change, content?: Buffer) => {
    if (c.kind === 'delete') return void result.deleted.push(c.rel);
    result.written.push(c.rel);
    const digest = { sha256: createHash('sha256').update(content!).digest('hex'), bytes: content!.length };
    result.digests.set(c.rel, digest);
  };
  if (!apply || accepted.length === 0) {
    for (const a of accepted) done(a.c, a.content);
    await ws.worker.done();
    return result;
  }
  const { worker } = ws;
  try {
    for (const { c, content } of accepted) {
      const before = ws.files.get(c.rel);
      await worker.send(
        {
          op: c.kind,
          rel: c.rel,
          mode: before?.mode ?? 0o644,
          expect: identity(before),
          ...(owner && before !== undefined ? { owner: { uid: before.uid, gid: before.gid } } : {}),
        },
        content,
      );
      const reply = (await worker.next())?.header;
      if (reply === undefined) throw new Error('the workspace worker ended early');
      if (reply.ok === true) done(c, content);
      else {
        const why = REFUSALS[reply.why as ApplyRefusal] ?? REFUSALS.error;
        const code =
          typeof reply.code === 'string' && /^E[A-Z0-9]{1,15}$/.test(reply.code) ? reply.code : 'error';
        result.refused.push({ path: c.rel, reason: reply.why === 'error' ? `${why}: ${code}` : why });
      }
    }
    await worker.send({ op: 'end' });
  } finally {
    await worker.done();
  }
  return result;
}
