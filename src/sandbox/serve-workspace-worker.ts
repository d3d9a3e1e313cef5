import { randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  fstatSync,
  linkSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  renameSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { once } from 'node:events';
import type { Readable, Writable } from 'node:stream';
import { at, closeHeld, isName, lookAt, openFolderAt, openHeld, type Held } from './fd-at.js';
import { perm } from './stage-mounts.js';
import { createFrameReader, encodeFrame, type Frame } from './workspace-frames.js';

/**
 * The host side of a workspace copy, run in a process of its own with the workspace owner's identity
 * (`spawn-workspace-worker.ts`): it walks and reads the workspace for the copy-in, and applies a run's changes. It
 * starts from the workspace folder the server opened (fd 3) and works only through folder fds it opened itself,
 * one component at a time, never following a link (`fd-at.ts`). A file is read from the fd that was checked; a
 * change is made by name inside a held folder. See docs/architecture.md for what this holds against.
 */
export interface CopyRequest {
  op: 'copy';
  /** Paths (relative) left out: the server's private files. */
  hide: string[];
  /** Leave out what this identity may not read by its mode bits. */
  onlyOpenTo?: { uid: number; gid: number };
  maxEntries: number;
  maxBytes: number;
  maxDepth: number;
}

/** One change to apply; `expect` is the host file as copied (null: there was none). */
export interface ChangeRequest {
  op: 'write' | 'delete';
  rel: string;
  mode: number;
  expect: { ino: string; size: string; mtimeNs: string } | null;
  owner?: { uid: number; gid: number };
}

/** Why a change was not applied, as the worker reports it. */
export type ApplyRefusal = 'changed' | 'parent' | 'error';

const ROOT_FD = 3;
/** The workspace folder the server opened and handed over (never closed here). */
const rootFolder = (): Held => ({ fd: ROOT_FD, st: fstatSync(ROOT_FD, { bigint: true }) });

const closeQuietly = (h: Held | undefined) => {
  try {
    closeHeld(h);
  } catch {
    // Already closed.
  }
};

function readAll(fd: number, size: number): Buffer {
  const buf = Buffer.allocUnsafe(size);
  let got = 0;
  while (got < size) {
    const n = readSync(fd, buf, got, size - got, got);
    if (n === 0) break;
    got += n;
  }
  return buf.subarray(0, got);
}

/** Walks the workspace from its folder fd, sending one frame per entry. */
async function copyOut(req: CopyRequest, send: (h: Record<string, unknown>, b?: Buffer) => Promise<void>) {
  const hidden = new Set(req.hide);
  const asRoot = process.getuid?.() === 0;
  let entries = 0;
  let bytes = 0;
  const isOpen = (h: Held) => {
    const who = req.onlyOpenTo;
    if (who === undefined || h.st.isSymbolicLink()) return true;
    const ids = { uid: Number(h.st.uid), gid: Number(h.st.gid) };
    const may = (bit: number) => perm(Number(h.st.mode), who.uid, who.gid, ids, bit);
    return may(0o4) && (!h.st.isDirectory() || may(0o1));
  };
  const walk = async (dir: Held, rel: string, depth: number): Promise<boolean> => {
    if (depth > req.maxDepth) return send({ t: 'error', code: 'deep' }).then(() => false);
    const raw = readdirSync(`/proc/self/fd/${dir.fd}`, { encoding: 'buffer' });
    const names = raw.map((b) => b.toString('utf8')).filter((n, i) => Buffer.from(n).equals(raw[i]!));
    for (const name of names.sort()) {
      if (!isName(name)) continue;
      const r = rel === '' ? name : `${rel}/${name}`;
      if (name === '.git') {
        const git = rel === '' ? lookAt(dir.fd, name) : undefined;
        closeQuietly(git);
        if (git?.st.isDirectory() === true) await send({ t: 'git' });
        continue;
      }
      if (hidden.has(r)) {
        await send({ t: 'left', rel: r });
        continue;
      }
      if (++entries > req.maxEntries) return send({ t: 'error', code: 'entries' }).then(() => false);
      const l = lookAt(dir.fd, name);
      if (l === undefined) continue;
      try {
        // A hard link may be one a local user made to a file only root can read (a root worker reads it anyway).
        const linked = asRoot && l.st.isFile() && l.st.nlink > 1n;
        if (!isOpen(l) || linked) {
          await send({ t: 'left', rel: r });
          continue;
        }
        if (l.st.isSymbolicLink()) {
          await send({ t: 'link', rel: r, target: readlinkSync(at(dir.fd, name)) });
          continue;
        }
        const o = openHeld(l);
        if (o === undefined) continue; // Sockets, FIFOs and devices are not copied.
        try {
          const mode = Number(o.st.mode) & 0o7777;
          if (o.st.isDirectory()) {
            await send({ t: 'dir', rel: r, mode });
            if (!(await walk(o, r, depth + 1))) return false;
            continue;
          }
          bytes += Number(o.st.size);
          if (bytes > req.maxBytes) return send({ t: 'error', code: 'bytes' }).then(() => false);
          const body = readAll(o.fd, Number(o.st.size));
          const id = { ino: String(o.st.ino), size: String(o.st.size), mtimeNs: String(o.st.mtimeNs) };
          await send({ t: 'file', rel: r, mode, uid: Number(o.st.uid), gid: Number(o.st.gid), ...id }, body);
        } finally {
          closeQuietly(o);
        }
      } finally {
        closeQuietly(l);
      }
    }
    return true;
  };
  const root = rootFolder();
  if (await walk(root, '', 0)) await send({ t: 'end' });
}

/** Opens (making when `create`) the parent folders of `rel` below the root, never through a link. */
function openParent(parts: string[], create: boolean): Held | undefined {
  let cur: Held = rootFolder();
  const opened: Held[] = [];
  try {
    for (const part of parts) {
      let next: Held | undefined = openFolderAt(cur.fd, part);
      if (next === undefined && create && lookAt(cur.fd, part) === undefined) {
        mkdirSync(at(cur.fd, part), 0o755);
        next = openFolderAt(cur.fd, part);
        // A folder this worker made takes its parent's owner when the worker may give it (root).
        if (next !== undefined && process.getuid?.() === 0)
          fchownSync(next.fd, Number(cur.st.uid), Number(cur.st.gid));
      }
      if (next === undefined) return undefined;
      opened.push(next);
      cur = next;
    }
    opened.pop();
    return cur;
  } finally {
    for (const h of opened) closeQuietly(h);
  }
}

const same = (h: Held | undefined, e: ChangeRequest['expect']) =>
  e === null
    ? h === undefined
    : h !== undefined &&
      h.st.isFile() &&
      String(h.st.ino) === e.ino &&
      String(h.st.size) === e.size &&
      String(h.st.mtimeNs) === e.mtimeNs;

/** Applies one change inside its held parent folder; undefined when applied, else why not. */
function applyOne(c: ChangeRequest, body: Buffer): ApplyRefusal | undefined {
  const parts = c.rel.split('/');
  const name = parts.pop()!;
  const dir = openParent(parts, c.op === 'write');
  if (dir === undefined) return 'parent';
  try {
    const now = lookAt(dir.fd, name);
    const unchanged = same(now, c.expect);
    closeQuietly(now);
    if (!unchanged) return 'changed';
    if (c.op === 'delete') {
      unlinkSync(at(dir.fd, name));
      return undefined;
    }
    const tmp = `.skills-mcp-${randomBytes(6).toString('hex')}.tmp`;
    const fd = openSync(
      at(dir.fd, tmp),
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
      0o600,
    );
    try {
      for (let off = 0; off < body.length;) off += writeSync(fd, body, off, body.length - off);
      fchmodSync(fd, c.mode);
      if (process.getuid?.() === 0)
        fchownSync(fd, c.owner?.uid ?? Number(dir.st.uid), c.owner?.gid ?? Number(dir.st.gid));
    } catch (e) {
      closeSync(fd);
      unlinkSync(at(dir.fd, tmp));
      throw e;
    }
    closeSync(fd);
    try {
      // A new file never replaces one made since the check (link fails on an existing name); a rewrite replaces
      // the name's entry, never writing through it.
      if (c.expect === null) linkSync(at(dir.fd, tmp), at(dir.fd, name));
      else renameSync(at(dir.fd, tmp), at(dir.fd, name));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'EEXIST') throw e;
      return 'changed';
    } finally {
      if (c.expect === null) unlinkSync(at(dir.fd, tmp));
    }
    return undefined;
  } finally {
    // The workspace folder itself (fd 3) serves every change.
    if (dir.fd !== ROOT_FD) closeQuietly(dir);
  }
}

/**
 * Serves one request stream: a `copy` request and then, once the run is over, the changes to apply (each answered in
 * turn) until `end` or the end of its input.
 */
export async function serveWorkspaceWorker(input: Readable, output: Writable): Promise<void> {
  // Waits only when the pipe is full: the server reads as fast as it writes its copy.
  const send = async (header: Record<string, unknown>, body?: Buffer) => {
    if (!output.write(encodeFrame(header, body))) await once(output, 'drain');
  };
  const reader = createFrameReader({ maxHeaderBytes: 64 * 1024, maxBodyBytes: 1 << 30 });
  const frames: Frame[] = [];
  const flushed = () => new Promise<void>((resolve) => output.write('', () => resolve()));
  for await (const chunk of input) {
    frames.push(...reader.push(chunk as Buffer));
    while (frames.length > 0) {
      const { header, body } = frames.shift()!;
      if (header.op === 'copy') {
        await copyOut(header as unknown as CopyRequest, send);
        await flushed();
        continue;
      }
      if (header.op === 'end') return;
      const c = header as unknown as ChangeRequest;
      let why: ApplyRefusal | undefined;
      let code: string | undefined;
      try {
        why = parts(c.rel) ? applyOne(c, body) : 'parent';
      } catch (e) {
        why = 'error';
        code = (e as NodeJS.ErrnoException).code;
      }
      await send(why === undefined ? { ok: true } : { ok: false, why, ...(code ? { code } : {}) });
    }
  }
}

const parts = (rel: unknown) => typeof rel === 'string' && rel.split('/').every(isName);
