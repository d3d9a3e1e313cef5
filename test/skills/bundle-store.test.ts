import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBundleStore } from '../../src/skills/bundle-store.js';
import { hashBundle } from '../../src/skills/bundle-hash.js';
import { pruneBundles } from '../../src/skills/prune-bundles.js';
import { removeSealedTree } from '../../src/skills/remove-sealed-tree.js';
import { isSkillsError } from '../../src/errors.js';

const DAY_MS = 24 * 60 * 60 * 1000;
let dirs: string[] = [];
afterEach(async () => {
  for (const d of dirs) await removeSealedTree(d);
  dirs = [];
});

function setup() {
  const dir = mkdtempSync(join(tmpdir(), 'skills-mcp-bundles-'));
  dirs.push(dir);
  const skill = join(dir, 'skill');
  mkdirSync(join(skill, 'scripts', 'lib'), { recursive: true });
  writeFileSync(join(skill, 'SKILL.md'), '---\nname: s\ndescription: A test skill.\n---\n\nS.\n');
  writeFileSync(join(skill, 'scripts', 'main.py'), 'print("v1")\n', { mode: 0o755 });
  writeFileSync(join(skill, 'scripts', 'lib', 'helper.py'), 'V = 1\n');
  return { dir, skill, root: join(dir, 'bundles') };
}

/** A pid that was a process of ours and has exited. */
function deadPid(): number {
  const r = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return Number(r.stdout);
}

/** Backdates a copy's last use by `days`. */
const age = (path: string, days: number) => {
  const t = (Date.now() - days * DAY_MS) / 1000;
  utimesSync(path, t, t);
};

/** What a folder holds, without the modes (a copy is read-only). */
const contents = (dir: string) => hashBundle(dir).entries.map(({ path, sha256 }) => ({ path, sha256 }));

const names = (root: string) => readdirSync(root).sort();

describe('bundle store: verified, read-only copies', () => {
  it('copies exactly the hashed files with their modes, less group and other write, and reuses the copy', async () => {
    const { skill, root } = setup();
    const { sha256 } = hashBundle(skill);
    const store = createBundleStore(root);
    const first = await store.materialize(skill, sha256);
    expect(first.dir).toBe(join(root, sha256));
    expect(first.copiedMs).toBeGreaterThanOrEqual(0);
    expect(contents(first.dir)).toEqual(contents(skill));
    // Read-only comes from the owner (the server) and the read-only mount, not from 0444: a script copying one of
    // these files gets a file it can write.
    for (const d of [first.dir, join(first.dir, 'scripts'), join(first.dir, 'scripts', 'lib')])
      expect(statSync(d).mode & 0o777).toBe(0o755);
    expect(statSync(join(first.dir, 'scripts', 'main.py')).mode & 0o777).toBe(
      statSync(join(skill, 'scripts', 'main.py')).mode & 0o755,
    );
    expect(statSync(join(first.dir, 'SKILL.md')).mode & 0o777).toBe(0o644);
    expect(statSync(join(first.dir, 'SKILL.md')).uid).toBe(process.getuid?.());
    // The live folder changes: the copy made for the approved hash is what the next call gets.
    writeFileSync(join(skill, 'scripts', 'main.py'), 'print("v2")\n');
    const again = await store.materialize(skill, sha256);
    expect(again.copiedMs).toBeUndefined();
    expect(readFileSync(join(again.dir, 'scripts', 'main.py'), 'utf8')).toBe('print("v1")\n');
    first.release();
    again.release();
  });

  it('hashes to the approved bundle hash, and to another once the copy is changed on disk', async () => {
    const { skill, root } = setup();
    const { sha256 } = hashBundle(skill);
    const copy = await createBundleStore(root).materialize(skill, sha256);
    expect(hashBundle(copy.dir).sha256).toBe(sha256);
    writeFileSync(join(copy.dir, 'SKILL.md'), 'changed\n');
    expect(hashBundle(copy.dir).sha256).not.toBe(sha256);
    copy.release();
  });

  it('makes one copy for concurrent first calls of the same bundle', async () => {
    const { skill, root } = setup();
    const { sha256 } = hashBundle(skill);
    const store = createBundleStore(root);
    const calls = await Promise.all([1, 2, 3].map(() => store.materialize(skill, sha256)));
    // One copy job: every caller got its timing, and nothing but the copy and the holds is left.
    expect(new Set(calls.map((c) => c.copiedMs)).size).toBe(1);
    expect(calls[0]!.copiedMs).toBeDefined();
    expect(names(root)).toEqual(['.holds', sha256]);
    for (const c of calls) c.release();
  });

  it('keeps nothing and says STALE_BINDING when the folder changed after it was bound', async () => {
    const { skill, root } = setup();
    const { sha256 } = hashBundle(skill);
    writeFileSync(join(skill, 'scripts', 'lib', 'helper.py'), 'V = 2\n');
    const err = await createBundleStore(root)
      .materialize(skill, sha256)
      .catch((e: unknown) => e);
    expect(isSkillsError(err) && err.code).toBe('STALE_BINDING');
    expect(names(root).filter((n) => n !== '.holds')).toEqual([]);
    expect(readdirSync(join(root, '.holds'))).toEqual([]);
  });

  it('never uses a copy a crash left half-made, and prune removes it once its process is gone', async () => {
    const { skill, root } = setup();
    const { sha256 } = hashBundle(skill);
    // What a crash mid-copy leaves: a temporary folder with part of the files.
    const crashed = join(root, `.tmp-${deadPid()}-0123456789ab`);
    mkdirSync(join(crashed, 'scripts'), { recursive: true });
    writeFileSync(join(crashed, 'scripts', 'main.py'), 'print("half")\n');
    const copy = await createBundleStore(root).materialize(skill, sha256);
    expect(readFileSync(join(copy.dir, 'scripts', 'main.py'), 'utf8')).toBe('print("v1")\n');
    expect(contents(copy.dir)).toEqual(contents(skill));
    // One being made by a live process (this one) stays.
    const live = join(root, `.tmp-${process.pid}-abcdef012345`);
    mkdirSync(live);
    await pruneBundles(root, { cutoffMs: Date.now() - DAY_MS });
    expect(existsSync(crashed)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(existsSync(copy.dir)).toBe(true);
    copy.release();
  });
});

describe('bundle store: prune', () => {
  async function twoCopies() {
    const s = setup();
    const a = hashBundle(s.skill).sha256;
    const store = createBundleStore(s.root);
    (await store.materialize(s.skill, a)).release();
    writeFileSync(join(s.skill, 'scripts', 'main.py'), 'print("v2")\n');
    const b = hashBundle(s.skill).sha256;
    return { ...s, store, a, b };
  }

  it('removes copies not used since the cutoff and keeps the recent ones', async () => {
    const { root, store, skill, a, b } = await twoCopies();
    (await store.materialize(skill, b)).release();
    age(join(root, a), 20);
    const dry = await pruneBundles(root, { cutoffMs: Date.now() - 14 * DAY_MS, dryRun: true });
    expect(dry).toEqual({ removed: [a], kept: 0 });
    expect(existsSync(join(root, a))).toBe(true);
    const done = await pruneBundles(root, { cutoffMs: Date.now() - 14 * DAY_MS });
    expect(done).toEqual({ removed: [a], kept: 0 });
    expect(names(root)).toEqual(['.holds', b]);
  });

  it('keeps a copy a live session refers to, and one a run of this process holds', async () => {
    const { root, store, skill, a, b } = await twoCopies();
    const running = await store.materialize(skill, b);
    age(join(root, a), 30);
    age(join(root, b), 30);
    const r = await pruneBundles(root, { cutoffMs: Date.now(), referenced: () => new Set([a]) });
    expect(r).toEqual({ removed: [], kept: 2 });
    expect(existsSync(join(root, a)) && existsSync(join(root, b))).toBe(true);
    running.release();
    const after = await pruneBundles(root, { cutoffMs: Date.now() });
    expect(after.removed.sort()).toEqual([a, b].sort());
    expect(after.kept).toBe(0);
  });

  it('keeps a copy another live process holds; a hold left by a dead process does not count', async () => {
    const { root, store, skill, a, b } = await twoCopies();
    (await store.materialize(skill, b)).release();
    const other = spawn('sleep', ['600'], { stdio: 'ignore' });
    try {
      writeFileSync(join(root, '.holds', `${a}.${other.pid}`), '');
      writeFileSync(join(root, '.holds', `${b}.${deadPid()}`), '');
      const r = await pruneBundles(root, { cutoffMs: Date.now() + 1000 });
      expect(r).toEqual({ removed: [b], kept: 1 });
      expect(readdirSync(join(root, '.holds'))).toEqual([`${a}.${other.pid}`]);
    } finally {
      other.kill('SIGKILL');
    }
  });

  it('makes a pruned copy again, verified, when a call needs it', async () => {
    const { root, store, skill, b } = await twoCopies();
    const first = await store.materialize(skill, b);
    first.release();
    await pruneBundles(root, { cutoffMs: Date.now() + 1000 });
    expect(existsSync(first.dir)).toBe(false);
    const again = await createBundleStore(root).materialize(skill, b);
    expect(again.copiedMs).toBeDefined();
    expect(contents(again.dir)).toEqual(contents(skill));
    again.release();
  });
});
