import { mkdirSync, readdirSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isProcessAlive } from '../is-process-alive.js';

export interface BundleHolds {
  /** Marks the copy of `sha256` in use by this process until the returned function is called (idempotent). */
  hold(sha256: string): () => void;
}

const HOLD = /^([0-9a-f]{64})\.(\d+)$/;
const holdsDir = (root: string) => join(root, '.holds');

/**
 * Holds on bundle copies, visible to every process sharing the store: one empty file `.holds/<sha256>.<pid>` while
 * this process runs anything from that copy (counted in memory, so concurrent runs share the file).
 */
export function createBundleHolds(root: string): BundleHolds {
  const counts = new Map<string, number>();
  const hold = (sha256: string) => {
    const n = counts.get(sha256) ?? 0;
    if (n === 0) {
      mkdirSync(holdsDir(root), { recursive: true, mode: 0o711 });
      writeFileSync(join(holdsDir(root), `${sha256}.${process.pid}`), '', { mode: 0o644 });
    }
    counts.set(sha256, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (counts.get(sha256) ?? 1) - 1;
      if (left > 0) {
        counts.set(sha256, left);
        return;
      }
      counts.delete(sha256);
      try {
        unlinkSync(join(holdsDir(root), `${sha256}.${process.pid}`));
      } catch {
        // Removed already (by hand): nothing holds it any more anyway.
      }
    };
  };
  return { hold };
}

/** The bundles some live process holds; holds left by processes that are gone are removed on the way. */
export function heldBundles(root: string): Set<string> {
  const held = new Set<string>();
  let names: string[];
  try {
    names = readdirSync(holdsDir(root));
  } catch {
    return held;
  }
  for (const name of names) {
    const m = HOLD.exec(name);
    if (m === null) continue;
    if (isProcessAlive(Number(m[2]))) {
      held.add(m[1]!);
      continue;
    }
    try {
      unlinkSync(join(holdsDir(root), name));
    } catch {
      // Gone meanwhile.
    }
  }
  return held;
}
