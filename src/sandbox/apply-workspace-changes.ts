import { createHash, randomBytes } from 'node:crypto';
import { constants } from 'node:fs';
import {
  chown,
  lstat,
  mkdir,
  open,
  readdir,
  readlink,
  rename,
  unlink,
  type FileHandle,
} from 'node:fs/promises';
import { realpathSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { CopiedFile, WorkspaceCopy } from './copy-workspace.js';
import { MAX_WORKSPACE_BYTES, MAX_WORKSPACE_FILES } from './copy-workspace.js';
import { neverApplied } from './never-applied.js';

/** What a run changed in the workspace, as applied to the host. Paths are POSIX, relative to the workspace. */
export interface WorkspaceChanges {
  /** Regular files created or rewritten. */
  written: string[];
  /** sha256 and size of what was written, by path. */
  digests: Map<string, { sha256: string; bytes: number }>;
  deleted: string[];
  /** Changes left out, and why (a symlink, `.git`, a host-interpreted file, a conflict…). */
  refused: Array<{ path: string; reason: string }>;
}

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

/** What the script changed in its copy: the walk never follows a link and stops at the copy's limits. */
async function diffCopy(ws: WorkspaceCopy, refused: WorkspaceChanges['refused']): Promise<Change[]> {
  const changes: Change[] = [];
  const seen = new Set<string>();
  let entries = 0;
  const walk = async (dir: string, rel: string, depth: number): Promise<void> => {
    for (const name of (await readdir(dir)).sort()) {
      const r = rel === '' ? name : `${rel}/${name}`;
      if (++entries > MAX_WORKSPACE_FILES * 2 || depth > MAX_DEPTH) {
        refused.push({ path: r, reason: 'past the limits of a workspace copy' });
        return;
      }
      // A script can nest folders past PATH_MAX by changing into each one it makes.
      if (
        Buffer.byteLength(join(ws.root, r)) > MAX_PATH_BYTES ||
        Buffer.byteLength(join(dir, name)) > MAX_PATH_BYTES
      ) {
        refused.push({ path: r, reason: 'path too long' });
        continue;
      }
      const st = await lstat(join(dir, name), { bigint: true });
      // The read-only mount point of the real .git, still empty.
      if (
        r === '.git' &&
        ws.git !== undefined &&
        st.isDirectory() &&
        (await readdir(join(dir, name))).length === 0
      )
        continue;
      const before = ws.files.get(r);
      if (st.isFile()) seen.add(r);
      if (st.isDirectory()) {
        await walk(join(dir, name), r, depth + 1);
      } else if (!st.isFile()) {
        const copied = st.isSymbolicLink() && ws.links.get(r) === (await readlink(join(dir, name)));
        if (!copied) refused.push({ path: r, reason: 'not a regular file' });
      } else if (
        before?.copy.ino !== st.ino ||
        before.copy.timeNs !== st.ctimeNs ||
        before.copy.size !== st.size
      ) {
        const why = neverApplied(r) ?? (before !== undefined ? executable(before) : undefined);
        if (why === undefined) changes.push({ kind: 'write', rel: r });
        else refused.push({ path: r, reason: why });
      }
    }
  };
  await walk(ws.dir, '', 0);
  for (const rel of ws.files.keys()) {
    if (seen.has(rel) || refused.some((x) => x.path === rel)) continue;
    const why = neverApplied(rel);
    if (why === undefined) changes.push({ kind: 'delete', rel });
    else refused.push({ path: rel, reason: why });
  }
  return changes;
}

/** Is the host file still the one that was copied (or still absent)? */
async function unchangedOnHost(path: string, before: CopiedFile | undefined): Promise<boolean> {
  const st = await lstat(path, { bigint: true }).catch(() => undefined);
  if (before === undefined) return st === undefined;
  return (
    st?.isFile() === true &&
    st.ino === before.host.ino &&
    st.size === before.host.size &&
    st.mtimeNs === before.host.timeNs
  );
}

/** Creates the missing parent folders of `rel` in the host workspace; false when a parent is not a plain folder. */
async function ensureParents(root: string, rel: string, owner: boolean): Promise<boolean> {
  let cur = root;
  for (const part of rel.split('/').slice(0, -1)) {
    const parent = cur;
    cur = join(cur, part);
    const st = await lstat(cur).catch(() => undefined);
    if (st === undefined) {
      await mkdir(cur, { mode: 0o755 });
      if (owner) {
        const p = await lstat(parent);
        await chown(cur, p.uid, p.gid);
      }
    } else if (!st.isDirectory()) return false;
  }
  return true;
}

/** Copies the script's file into the workspace through a fresh temporary file, then renames it into place. */
async function writeBack(
  ws: WorkspaceCopy,
  rel: string,
  owner: boolean,
): Promise<{ sha256: string; bytes: number }> {
  const target = join(ws.root, rel);
  const before = ws.files.get(rel);
  const tmp = join(dirname(target), `.skills-mcp-${randomBytes(6).toString('hex')}.tmp`);
  let src: FileHandle | undefined;
  let dest: FileHandle | undefined;
  try {
    src = await open(join(ws.dir, rel), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    const content = await src.readFile();
    const mode = before?.mode ?? 0o644;
    dest = await open(
      tmp,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      mode,
    );
    await dest.writeFile(content);
    await dest.chmod(mode);
    if (owner) {
      const p = await lstat(dirname(target));
      await dest.chown(before?.uid ?? p.uid, before?.gid ?? p.gid);
    }
    await dest.close();
    dest = undefined;
    await rename(tmp, target);
    return { sha256: createHash('sha256').update(content).digest('hex'), bytes: content.length };
  } catch (err) {
    await dest?.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw err;
  } finally {
    await src?.close().catch(() => undefined);
  }
}

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

/**
 * Applies what the script changed in its private copy to the host workspace: regular files only, never below
 * `.git` or another host-interpreted path (`never-applied.ts`), never through a symlink, never over a file that
 * changed on the host since the copy was made, never over a file executable on the host. Modes are kept (new files
 * are 0644); on a root server, files keep their owner and new ones take their folder's. Never changes the server's
 * own paths (`protect`: skills folders, audit log, sandbox profiles) when they lie in the workspace: a run could
 * otherwise rewrite the code of the next one, or the record of its own. Runs after every process of the run has
 * exited.
 */
export async function applyWorkspaceChanges(
  ws: WorkspaceCopy,
  owner: boolean,
  protect: readonly string[] = [],
): Promise<WorkspaceChanges> {
  const result: WorkspaceChanges = { written: [], digests: new Map(), deleted: [], refused: [] };
  const own = serverPaths(protect);
  let bytes = 0;
  for (const c of await diffCopy(ws, result.refused)) {
    const target = join(ws.root, c.rel);
    try {
      if (isUnder(target, own)) {
        result.refused.push({ path: c.rel, reason: 'the server reads it (skills, audit log or profiles)' });
      } else if (isLeftOut(ws, c.rel)) {
        result.refused.push({ path: c.rel, reason: 'the sandbox user may not read it on the host' });
      } else if (!(await unchangedOnHost(target, ws.files.get(c.rel)))) {
        result.refused.push({ path: c.rel, reason: 'changed on the host during the run' });
      } else if (c.kind === 'delete') {
        await unlink(target);
        result.deleted.push(c.rel);
      } else if (!(await ensureParents(ws.root, c.rel, owner))) {
        result.refused.push({ path: c.rel, reason: 'a parent folder on the host is not a plain folder' });
      } else if (bytes > MAX_WORKSPACE_BYTES) {
        result.refused.push({ path: c.rel, reason: 'past the size limit of a workspace copy' });
      } else {
        const w = await writeBack(ws, c.rel, owner);
        bytes += w.bytes;
        result.written.push(c.rel);
        result.digests.set(c.rel, w);
      }
    } catch (err) {
      result.refused.push({
        path: c.rel,
        reason: `could not apply: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
      });
    }
  }
  return result;
}
