import { execFileSync } from 'node:child_process';
import {
  existsSync,
  linkSync,
  mkdirSync,
  readdirSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  listSessionFiles,
  measureSessionFolder,
  prepareSessionFolder,
  pruneSessionFolders,
  readSessionFile,
  sessionFolderName,
} from '../../src/runner/session-folder.js';
import { tempDir } from '../helpers/temp-dir.js';

const caps = { maxBytes: 1_000_000, maxFiles: 100 };

describe('session folders on disk (what a script left is hostile)', () => {
  const temps: { cleanup: () => void }[] = [];
  afterEach(() => {
    for (const t of temps.splice(0)) t.cleanup();
  });
  const setup = () => {
    const t = tempDir();
    temps.push(t);
    const canary = join(t.dir, 'canary');
    mkdirSync(canary);
    for (let i = 0; i < 300; i++) writeFileSync(join(canary, `c${i}`), 'CANARY'.repeat(1000));
    return { runs: join(t.dir, 'runs'), canary };
  };

  it('names folders per session and principal', () => {
    const a = sessionFolderName({ id: 'x' });
    expect(a).toMatch(/^s-[0-9a-f]{32}$/);
    expect(sessionFolderName({ id: 'x', principal: 'p' })).not.toBe(a);
    expect(sessionFolderName({ id: 'y' })).not.toBe(a);
  });

  it('counts, lists and reads without following links, FIFOs or hard links', () => {
    const { runs, canary } = setup();
    const dir = prepareSessionFolder(runs, { id: 's1' });
    writeFileSync(join(dir, 'a.txt'), 'own');
    symlinkSync(canary, join(dir, 'all'));
    symlinkSync(join(canary, 'c0'), join(dir, 'one.txt'));
    execFileSync('mkfifo', [join(dir, 'pipe')]);
    linkSync(join(canary, 'c1'), join(dir, 'hard'));
    mkdirSync(join(dir, 'sub'));
    writeFileSync(join(dir, 'sub', 'b.txt'), 'bb');
    // 300 files and 1.8 MB behind the link: over both caps if it were followed.
    // (A hard link's bytes count: they take room in the folder.)
    expect(measureSessionFolder(dir, caps)).toEqual({ bytes: 6005, files: 7 });
    expect(listSessionFiles(dir, 10)).toEqual([
      { path: 'a.txt', bytes: 3 },
      { path: 'sub/b.txt', bytes: 2 },
    ]);
    expect(readSessionFile(dir, 'sub/b.txt', 10).toString()).toBe('bb');
    for (const p of ['one.txt', 'all/c0', 'pipe', 'hard', 'sub', '../s1', 'sub/../a.txt'])
      expect(() => readSessionFile(dir, p, 1000), p).toThrow(/not in the session folder|not a file/);
    expect(() => readSessionFile(dir, 'a.txt', 2)).toThrow(/the limit is 2/);
  });

  it('stops counting past a cap, and refuses names no path can name and trees too deep to walk', () => {
    const { runs } = setup();
    const dir = prepareSessionFolder(runs, { id: 's2' });
    for (let i = 0; i < 50; i++) writeFileSync(join(dir, `f${i}`), 'x');
    expect(measureSessionFolder(dir, { maxBytes: 1000, maxFiles: 10 }).files).toBe(11);
    const odd = prepareSessionFolder(runs, { id: 's3' });
    writeFileSync(Buffer.from(`${odd}/\xff`, 'latin1'), 'x');
    expect(measureSessionFolder(odd, caps).refused).toBe('a name that is not UTF-8');
    const deep = prepareSessionFolder(runs, { id: 's4' });
    mkdirSync(join(deep, ...Array.from({ length: 70 }, () => 'd')), { recursive: true });
    expect(measureSessionFolder(deep, caps).refused).toBe('folders nested deeper than 64');
  });

  it('prunes folders unused past the retention, never through a link, and keeps fresh ones', async () => {
    const { runs, canary } = setup();
    const old = prepareSessionFolder(runs, { id: 'old' });
    symlinkSync(canary, join(old, 'all'));
    const past = new Date(Date.now() - 10 * 86_400_000);
    utimesSync(old, past, past);
    const fresh = prepareSessionFolder(runs, { id: 'fresh' });
    // A link named like a session folder, pointing at the canary: not a folder of ours.
    symlinkSync(canary, join(runs, 'sessions', `s-${'0'.repeat(32)}`));
    const removed = await pruneSessionFolders(runs, Date.now() - 7 * 86_400_000);
    expect(removed).toEqual([sessionFolderName({ id: 'old' })]);
    expect(existsSync(old)).toBe(false);
    expect(existsSync(fresh)).toBe(true);
    expect(readdirSync(canary)).toHaveLength(300);
  });
});
