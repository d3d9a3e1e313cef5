import { randomBytes } from 'node:crypto';
import { existsSync, utimesSync } from 'node:fs';
import { join } from 'node:path';
import { SkillsError } from '../errors.js';
import { copyBundle } from './copy-bundle.js';
import { createBundleHolds } from './bundle-holds.js';

export interface BundleCopy {
  /** `<store>/<sha256>/`: read-only, exactly the files the hash covers. */
  dir: string;
  /** How long making the copy took, when this call made it (or waited for the call that did). */
  copiedMs?: number;
  /** Ends this call's use of the copy: until then no prune removes it. Call it once, when the run is over. */
  release: () => void;
}

export interface BundleStore {
  /**
   * The read-only copy of `skillDir` whose bundle hash is `sha256`, held for the caller until `release`. Made on
   * first need off the event loop: copied into a temporary folder, the bytes written hashed, and renamed into
   * place (owned by the server, mounted read-only into runs), so a copy is either complete and verified or not
   * there. When the bytes do not hash to `sha256` (the folder changed after it was bound) nothing is kept and
   * STALE_BINDING is thrown. Concurrent first
   * calls of one bundle share one copy; later calls reuse it, whatever the live folder holds by then.
   */
  materialize(skillDir: string, sha256: string): Promise<BundleCopy>;
}

const HEX64 = /^[0-9a-f]{64}$/;
/** A copy's folder time is its last use (what retention goes by); refreshed at most this often. */
const TOUCH_EVERY_MS = 60 * 60 * 1000;

/**
 * Content-addressed, immutable copies of skill folders under `root`. A run executes from the copy of the bundle that
 * was approved, so files changed, added or swapped in the live folder after the check never run, and files the hash
 * leaves out (caches, `node_modules`, links leaving the skill) are not there to be imported.
 */
export function createBundleStore(root: string, opts: { now?: () => number } = {}): BundleStore {
  const now = opts.now ?? Date.now;
  const holds = createBundleHolds(root);
  const copying = new Map<string, Promise<number>>();
  const touched = new Map<string, number>();

  const markUsed = (sha256: string, dir: string) => {
    const t = now();
    if (t - (touched.get(sha256) ?? 0) < TOUCH_EVERY_MS) return;
    touched.set(sha256, t);
    try {
      utimesSync(dir, t / 1000, t / 1000);
    } catch {
      // Not ours to touch (another user's store): retention then goes by when it was made.
    }
  };

  const copyOnce = (skillDir: string, sha256: string, dir: string): Promise<number> => {
    let job = copying.get(sha256);
    if (job === undefined) {
      const started = performance.now();
      const tmp = join(root, `.tmp-${process.pid}-${randomBytes(6).toString('hex')}`);
      job = copyBundle(skillDir, sha256, tmp, dir).then(() => performance.now() - started);
      copying.set(sha256, job);
      const done = () => copying.delete(sha256);
      job.then(done, done);
    }
    return job;
  };

  const materialize = async (skillDir: string, sha256: string): Promise<BundleCopy> => {
    if (!HEX64.test(sha256)) throw new SkillsError('INTERNAL', 'bundle hash is not a sha256');
    const dir = join(root, sha256);
    // Held before it is looked up: a prune that runs from here on sees the hold and leaves the copy.
    const release = holds.hold(sha256);
    try {
      if (existsSync(dir)) {
        markUsed(sha256, dir);
        return { dir, release };
      }
      const copiedMs = await copyOnce(skillDir, sha256, dir);
      touched.set(sha256, now());
      return { dir, copiedMs, release };
    } catch (e) {
      release();
      throw e;
    }
  };
  return { materialize };
}
