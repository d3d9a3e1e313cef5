import { createHash } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { chmod, mkdir, open, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { canonicalJson } from '../canonical-json.js';
import { SkillsError } from '../errors.js';
import { listSkillFiles } from './list-skill-files.js';
import { removeSealedTree } from './remove-sealed-tree.js';

/** Files read and written at once: enough to keep the disk busy, few enough to leave the thread pool to others. */
const IN_FLIGHT = 8;

const sha = (data: Uint8Array | string): string => createHash('sha256').update(data).digest('hex');
/**
 * A copied file keeps its mode, less group and other write. Read-only comes from who owns the copy (the server; the
 * sandbox user is another uid when the server is root) and from the read-only mount, not from the mode bits: a
 * script that copies one of its files (`shutil.copy` keeps the mode) can then write what it made. The copy's modes
 * are what the bundle hash covers, so hashing the copy gives the approved hash until someone changes it.
 */
const copyMode = (mode: number) => mode & 0o755;

const changed = () =>
  new SkillsError('STALE_BINDING', 'the skill folder changed after the call was approved', {
    hint: 'Nothing was run. Call the tool again so the new version can be reviewed.',
  });

/** The bytes of a regular file; anything else (a FIFO or device swapped in since the listing) is refused unread. */
async function readRegular(path: string): Promise<Buffer> {
  const fh = await open(path, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOCTTY).catch(
    (e: unknown) => {
      // Removed or replaced since the listing.
      throw ['ENOENT', 'ENOTDIR', 'ELOOP'].includes((e as NodeJS.ErrnoException).code ?? '') ? changed() : e;
    },
  );
  try {
    if (!(await fh.stat()).isFile()) throw changed();
    return await fh.readFile();
  } finally {
    await fh.close();
  }
}

/** Every folder under `tmp` that holds the files, parents before children. */
function foldersOf(tmp: string, files: readonly { path: string }[]): string[] {
  const all = new Set<string>();
  for (const f of files) {
    for (let d = dirname(join(tmp, f.path)); d !== tmp && !all.has(d); d = dirname(d)) all.add(d);
  }
  return [...all].sort();
}

/**
 * Copies the files of `skillDir` that a bundle hash covers into `tmp` (with `IN_FLIGHT` files at a time, off the
 * event loop), checks that the bytes written hash to `sha256`, and renames it to `dir`. The copy is owned by the server and never
 * mounted writable; its files keep their modes (less group and other write), see {@link copyMode}.
 * A copy that does not verify, or fails half-way, is removed; one interrupted by a crash stays under its temporary
 * name, which is never looked up (prune removes it once its process is gone).
 */
export async function copyBundle(skillDir: string, sha256: string, tmp: string, dir: string): Promise<void> {
  await mkdir(dirname(tmp), { recursive: true, mode: 0o711 });
  await mkdir(tmp, { mode: 0o755 });
  try {
    const { files } = listSkillFiles(skillDir);
    const folders = foldersOf(tmp, files);
    for (const d of folders) await mkdir(d, { recursive: true, mode: 0o755 });
    const entries = new Array<{ path: string; sha256: string; mode: number }>(files.length);
    let next = 0;
    const worker = async () => {
      for (let i = next++; i < files.length; i = next++) {
        const f = files[i]!;
        const data = await readRegular(join(skillDir, f.path));
        const target = join(tmp, f.path);
        await writeFile(target, data, { mode: copyMode(f.mode), flag: 'wx' });
        // The umask may have taken bits the mode asked for.
        await chmod(target, copyMode(f.mode));
        entries[i] = { path: f.path, sha256: sha(data), mode: f.mode };
      }
    };
    // Every worker ends before the outcome is judged: none writes into a folder being removed.
    const outcomes = await Promise.allSettled(Array.from({ length: IN_FLIGHT }, worker));
    const failed = outcomes.find((o) => o.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    if (sha(canonicalJson(entries)) !== sha256) throw changed();
    // Whatever the umask: folders the sandbox user can enter and list, and only the owner can change.
    for (const d of folders) await chmod(d, 0o755);
    await chmod(tmp, 0o755);
    try {
      await rename(tmp, dir);
    } catch (e) {
      // Another process made the same copy first: theirs is identical (same hash).
      if (!existsSync(dir)) throw e;
      await removeSealedTree(tmp);
    }
  } catch (e) {
    await removeSealedTree(tmp);
    throw e;
  }
}
