import { createHash } from 'node:crypto';
import { utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createDigestCache } from '../../src/skills/digest-cache.js';
import { tempDir } from '../helpers/temp-dir.js';

const sha = (s: string) => `sha256:${createHash('sha256').update(s).digest('hex')}`;

describe('digest cache', () => {
  let t: { dir: string; cleanup: () => void };
  beforeEach(() => (t = tempDir()));
  afterEach(() => t.cleanup());

  it('gives the sha256 and size of the bytes on disk', () => {
    const path = join(t.dir, 'a.md');
    writeFileSync(path, 'héllo\n');
    expect(createDigestCache().digestOf(path)).toMatchObject({ digest: sha('héllo\n'), size: 7 });
  });

  it('reuses a digest while size and mtime are unchanged, and hashes again when either changes', () => {
    const path = join(t.dir, 'a.md');
    writeFileSync(path, 'aaaa');
    utimesSync(path, 1_000_000_000, 1_000_000_000);
    const cache = createDigestCache();
    const first = cache.digestOf(path);
    // Same size, same mtime: the cache key says "unchanged", so the old digest stands (no read).
    writeFileSync(path, 'bbbb');
    utimesSync(path, 1_000_000_000, 1_000_000_000);
    expect(cache.digestOf(path).digest).toBe(first.digest);
    // A new mtime with the same size: hashed again.
    utimesSync(path, 1_000_000_000, 1_000_000_005);
    expect(cache.digestOf(path).digest).toBe(sha('bbbb'));
    // A new size: hashed again.
    writeFileSync(path, 'ccccc');
    expect(cache.digestOf(path)).toMatchObject({ digest: sha('ccccc'), size: 5 });
  });

  it('throws for a missing file', () => {
    expect(() => createDigestCache().digestOf(join(t.dir, 'nope'))).toThrow(/ENOENT/);
  });
});
