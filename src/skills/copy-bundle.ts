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
/** Read-only bits of a file mode (execute bits kept, write bits dropped). */
const readOnly = (mode: number) => mode & 0o555;

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
 * event loop), checks that the bytes written hash to `sha256`, seals the copy read-only and renames it to `dir`.
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
        await writeFile(join(tmp, f.path), data, { mode: readOnly(f.mode) | 0o400, flag: 'wx' });
        entries[i] = { path: f.path, sha256: sha(data), mode: f.mode };
      }
    };
    // Every worker ends before the outcome is judged: none writes into a folder being removed.
    const outcomes = await Promise.allSettled(Array.from({ length: IN_FLIGHT }, worker));
    const failed = outcomes.find((o) => o.status === 'rejected');
    if (failed !== undefined) throw failed.reason;
    if (sha(canonicalJson(entries)) !== sha256) throw changed();
    // Deepest folders first, so each is still writable while its children are sealed.
    for (const d of folders.reverse()) await chmod(d, 0o555);
    await chmod(tmp, 0o555);
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
