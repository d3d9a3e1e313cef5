import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../../src/log.js';
import { loadCatalog, loadsOf, type Catalog } from '../../src/skills/catalog.js';
import { deferCheck } from '../../src/skills/defer-check.js';
import type { FolderLoad } from '../../src/skills/folder-load.js';
import { catalogCacheFile, openCatalogCache } from '../../src/skills/open-catalog-cache.js';
import { readCatalogCache } from '../../src/skills/read-catalog-cache.js';
import { readSkillBody } from '../../src/skills/read-skill-body.js';
import { tempDir } from '../helpers/temp-dir.js';

/**
 * Each test builds a skills root, starts "a server" twice or more over one state folder (read the cache, load the
 * catalog reusing it, save), and checks that every start serves exactly what a load without any cache serves.
 * Files written by the test are seconds old at most, which a real start would not trust (see isSettled): these
 * starts judge them by a clock a minute ahead, as a start a minute later would.
 */
const BUILD = 'test-build';
const later = () => Date.now() + 60_000;

const skillMd = (name: string, body = 'Do the thing.', extra = '') =>
  `---\nname: ${name}\ndescription: The ${name} skill. Use it in tests.\n${extra}---\n\n# ${name}\n\n${body}\n`;

let t: ReturnType<typeof tempDir>;
let root: string;
let state: string;
beforeEach(() => {
  t = tempDir();
  root = join(t.dir, 'skills');
  state = join(t.dir, 'state');
  mkdirSync(root);
});
afterEach(() => t.cleanup());

const write = (rel: string, text: string) => {
  mkdirSync(join(root, rel, '..'), { recursive: true });
  writeFileSync(join(root, rel), text);
};

/**
 * One start: what it served, how many folders it took from the cache unread, and whether it took the folders to
 * load from the cache instead of listing the root.
 */
function start(
  now: () => number = later,
  build = BUILD,
): { catalog: Catalog; reused: number; listed: boolean; problem?: string } {
  const cache = openCatalogCache({ stateDir: state, roots: [root], build, log: silentLogger() });
  const { loads, listed } = cache.take();
  const catalog = loadCatalog([root], { reuse: loads, now, ...(listed === undefined ? {} : { listed }) });
  cache.save(catalog);
  cache.flush();
  afterListing();
  const reused = catalog.folders.filter((f) => loads.get(f.dir) === f).length;
  const problem = readCatalogCache(catalogCacheFile(state, { build, roots: [root] }), {
    build,
    roots: [root],
  }).problem;
  return {
    catalog,
    reused,
    listed: listed !== undefined && catalog.listing === listed.stamps,
    ...(problem === undefined ? {} : { problem }),
  };
}

/** The catalog as a load without any cache sees it, compared field by field (instructions read from disk). */
function expectAsWithoutCache(catalog: Catalog) {
  const fresh = loadCatalog([root]);
  const view = (c: Catalog) => ({
    skills: c.skills.map((s) => ({ ...s, instructions: readSkillBody(s) })),
    findings: c.findings,
    lint: c.lint,
  });
  expect(view(catalog)).toEqual(view(fresh));
}

/**
 * Waits until the clock has moved past the skills folder's status-change time (and its skills/ folder's), so that a
 * test's next change to their entries is stamped anew: these starts trust stamps a real start would find too recent.
 */
function afterListing() {
  afterChangeTimeOf(root);
  if (existsSync(join(root, 'skills'))) afterChangeTimeOf(join(root, 'skills'));
}

/** Waits until the clock has moved past a file's status-change time, so the next write stamps it anew. */
function afterChangeTimeOf(path: string) {
  const ctime = statSync(path).ctimeMs;
  while (Date.now() <= ctime + 20) {
    // spin: the next write must fall in a later clock tick than the last one
  }
}

describe('the catalog cache', () => {
  it('serves from the cache what a load without it serves, without reading a folder that did not change', () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    write('beta/SKILL.md', skillMd('beta', 'Run it.', 'entry_point: scripts/run.py\n'));
    write('beta/scripts/run.py', 'print(1)\n');
    write('broken/SKILL.md', '---\nname: [unclosed\n---\n');
    write('long/SKILL.md', skillMd('long', 'x', 'unknown_field: 1\n'));
    mkdirSync(join(root, 'not-a-skill'));
    expect(start().reused).toBe(0);
    const second = start();
    expect(second.reused).toBe(5);
    expect(second.catalog.skills.map((s) => s.name)).toEqual(['alpha', 'beta', 'long']);
    expect(second.catalog.get('beta')).toMatchObject({ kind: 'executable', entryPoint: 'scripts/run.py' });
    expect(second.catalog.findings.map((f) => f.rule)).toEqual(['frontmatter-yaml']);
    expectAsWithoutCache(second.catalog);
  });

  it('sees a SKILL.md edited in place to the same size and the same modification time', () => {
    const file = join(root, 'alpha', 'SKILL.md');
    write('alpha/SKILL.md', skillMd('alpha', 'Say AAAA.'));
    // A whole second, so that setting it again gives exactly the same time.
    const second = Math.floor(Date.now() / 1000) - 60;
    utimesSync(file, second, second);
    start();
    const before = statSync(file);
    afterChangeTimeOf(file);
    writeFileSync(file, skillMd('alpha', 'Say BBBB.'));
    utimesSync(file, second, second);
    const after = statSync(file);
    expect([after.size, after.mtimeMs, after.ino]).toEqual([before.size, before.mtimeMs, before.ino]);
    const next = start();
    expect(next.reused).toBe(0);
    expect(readSkillBody(next.catalog.get('alpha')!)).toContain('Say BBBB.');
    expectAsWithoutCache(next.catalog);
  });

  it('never trusts what changed just before it was read (a later change could keep its size and times)', () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    const first = start(Date.now);
    expect(first.catalog.folders[0]!.stamps).toBeUndefined();
    expect(start(Date.now).reused).toBe(0);
  });

  it('sees skills added and removed, and files added, removed, grown and made executable', () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    write('beta/SKILL.md', skillMd('beta'));
    write('beta/scripts/a.py', 'print(1)\n');
    write('gamma/SKILL.md', skillMd('gamma'));
    write('gamma/references/guide.md', 'guide\n');
    start();
    write('delta/SKILL.md', skillMd('delta'));
    rmSync(join(root, 'alpha'), { recursive: true });
    write('beta/scripts/main.py', 'print(2)\n');
    rmSync(join(root, 'gamma', 'references', 'guide.md'));
    let next = start();
    expect(next.catalog.skills.map((s) => s.name)).toEqual(['beta', 'delta', 'gamma']);
    expect(next.catalog.get('beta')!.kind).toBe('executable');
    expect(next.catalog.get('gamma')!.files.map((f) => f.path)).toEqual(['SKILL.md']);
    expectAsWithoutCache(next.catalog);

    afterChangeTimeOf(join(root, 'beta', 'scripts', 'a.py'));
    writeFileSync(join(root, 'beta', 'scripts', 'a.py'), 'print(1)\nprint(3)\n');
    chmodSync(join(root, 'beta', 'scripts', 'main.py'), 0o755);
    next = start();
    expect(next.reused).toBe(2);
    expect(next.catalog.get('beta')!.files.find((f) => f.path === 'scripts/main.py')!.mode).toBe(0o755);
    expectAsWithoutCache(next.catalog);
  });

  it('sees a file replaced by one of the same size under the same name (another inode)', () => {
    write('alpha/SKILL.md', skillMd('alpha', 'Say AAAA.'));
    const file = join(root, 'alpha', 'SKILL.md');
    const second = Math.floor(Date.now() / 1000) - 60;
    utimesSync(file, second, second);
    start();
    writeFileSync(`${file}.new`, skillMd('alpha', 'Say BBBB.'));
    utimesSync(`${file}.new`, second, second);
    renameSync(`${file}.new`, file);
    const next = start();
    expect(readSkillBody(next.catalog.get('alpha')!)).toContain('Say BBBB.');
    expectAsWithoutCache(next.catalog);
  });

  it('reports a skill turned into a symlink that leaves the root, as a load without a cache does', () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    write('beta/SKILL.md', skillMd('beta'));
    start();
    const outside = join(t.dir, 'outside', 'beta');
    mkdirSync(outside, { recursive: true });
    writeFileSync(join(outside, 'SKILL.md'), skillMd('beta', 'From outside.'));
    rmSync(join(root, 'beta'), { recursive: true });
    symlinkSync(outside, join(root, 'beta'));
    const next = start();
    expect(next.catalog.skills.map((s) => s.name)).toEqual(['alpha']);
    expect(next.catalog.findings.map((f) => f.rule)).toEqual(['symlink-outside-root']);
    expectAsWithoutCache(next.catalog);
  });

  it('reports a name claimed twice from the cache as it does without one', () => {
    write('one/SKILL.md', skillMd('same'));
    write('two/SKILL.md', skillMd('same'));
    write('other/SKILL.md', skillMd('other'));
    start();
    const next = start();
    expect(next.reused).toBe(3);
    expect(next.catalog.findings.map((f) => f.rule)).toEqual([
      'name-folder-mismatch',
      'name-folder-mismatch',
      'duplicate-name',
      'duplicate-name',
    ]);
    expectAsWithoutCache(next.catalog);
  });

  it('keeps out of the cache a skill whose frontmatter JSON cannot carry, and still serves it', () => {
    write('alpha/SKILL.md', skillMd('alpha', 'x', 'limits:\n  top: .inf\n  zero: -0.0\n'));
    start();
    const next = start();
    expect(next.reused).toBe(0);
    expect(next.catalog.get('alpha')!.frontmatter.limits).toEqual({ top: Infinity, zero: -0 });
    expectAsWithoutCache(next.catalog);
  });

  it("keeps a file per build, so that two builds used in turn do not replace each other's", () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    start();
    expect(start(later, 'another-build').reused).toBe(0);
    expect(start(later, 'another-build').reused).toBe(1);
    expect(start().reused).toBe(1);
    expect(readdirSync(join(state, 'catalog-cache'))).toHaveLength(2);
  });

  it('writes a private file (0600 in a 0700 folder) and keeps no instructions in it', () => {
    write('alpha/SKILL.md', skillMd('alpha', 'SECRET-INSTRUCTIONS'));
    start();
    const file = catalogCacheFile(state, { build: BUILD, roots: [root] });
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(state, 'catalog-cache')).mode & 0o777).toBe(0o700);
    expect(readFileSync(file, 'utf8')).not.toContain('SECRET-INSTRUCTIONS');
    expect(readdirSync(join(state, 'catalog-cache'))).toEqual([file.split('/').pop()]);
  });
});

describe('the folders to load, from the cache', () => {
  it('are taken from the cache while the skills folder holds the same entries', () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    write('beta/SKILL.md', skillMd('beta'));
    mkdirSync(join(root, 'not-a-skill'));
    expect(start().listed).toBe(false);
    const second = start();
    expect(second.listed).toBe(true);
    expect(second.reused).toBe(3);
    expectAsWithoutCache(second.catalog);
  });

  it('are listed again when a skill folder is added, removed or renamed, in the root or its skills/ folder', () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    write('beta/SKILL.md', skillMd('beta'));
    write('skills/gamma/SKILL.md', skillMd('gamma'));
    start();
    expect(start().listed).toBe(true);
    write('delta/SKILL.md', skillMd('delta'));
    let next = start();
    expect(next.listed).toBe(false);
    expect(next.catalog.skills.map((k) => k.name)).toEqual(['alpha', 'beta', 'delta', 'gamma']);
    expectAsWithoutCache(next.catalog);

    renameSync(join(root, 'skills', 'gamma'), join(root, 'skills', 'gamma2'));
    write('skills/epsilon/SKILL.md', skillMd('epsilon'));
    next = start();
    expect(next.listed).toBe(false);
    expect(next.catalog.get('gamma')?.dir).toBe(join(root, 'skills', 'gamma2'));
    expectAsWithoutCache(next.catalog);

    rmSync(join(root, 'beta'), { recursive: true });
    next = start();
    expect(next.catalog.skills.map((k) => k.name)).toEqual(['alpha', 'delta', 'epsilon', 'gamma']);
    expectAsWithoutCache(next.catalog);
  });

  it('are listed again when the skills folder turns into a skill', () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    start();
    write('SKILL.md', skillMd('whole'));
    const next = start();
    expect(next.catalog.skills.map((k) => k.name)).toEqual(['whole']);
    expectAsWithoutCache(next.catalog);
  });

  it('are always listed again when the skills folder holds a symlinked skill folder', () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    write('skills/beta/SKILL.md', skillMd('beta'));
    symlinkSync(join(root, 'skills', 'beta'), join(root, 'beta-link'));
    start();
    const next = start();
    expect(next.listed).toBe(false);
    expect(next.catalog.listing).toBeUndefined();
    expectAsWithoutCache(next.catalog);
  });
});

describe('a start that checks each skill file first and the other files after', () => {
  /**
   * A start as `serve` makes it: the loads taken from the cache are checked as far as their skill file, the rest of
   * their stamps later (here at once), and the folders found changed then are read again.
   */
  function startInTwo() {
    const cache = openCatalogCache({ stateDir: state, roots: [root], build: BUILD, log: silentLogger() });
    const { loads, listed } = cache.take();
    const unchecked: FolderLoad[] = [];
    const first = loadCatalog([root], {
      reuse: loads,
      unchecked,
      now: later,
      ...(listed === undefined ? {} : { listed }),
    });
    const changed = deferCheck(unchecked).finish();
    const catalog =
      changed.size === 0 ? first : loadCatalog([root], { reuse: loadsOf(first), fresh: changed, now: later });
    cache.save(catalog);
    cache.flush();
    afterListing();
    return { first, unchecked, changed, catalog };
  }

  it('takes a skill whose skill file and folder are unchanged, and checks its other files before it is served', () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    write('beta/SKILL.md', skillMd('beta'));
    write('beta/scripts/a.py', 'print(1)\n');
    write('gamma/SKILL.md', skillMd('gamma'));
    write('gamma/references/guide.md', 'guide\n');
    start();
    // Changes the skill file and the skill folder do not show: a file grown, a file added to a subfolder.
    writeFileSync(join(root, 'beta', 'scripts', 'a.py'), 'print(1)\nprint(2)\n');
    afterChangeTimeOf(join(root, 'gamma', 'references'));
    write('gamma/references/more.md', 'more\n');
    const next = startInTwo();
    expect(next.unchecked.map((l) => l.folderName).sort()).toEqual(['alpha', 'beta', 'gamma']);
    // What the first answers give was checked: names, descriptions, the number of skills.
    expect(next.first.skills.map((s) => s.name)).toEqual(['alpha', 'beta', 'gamma']);
    expect([...next.changed].sort()).toEqual([join(root, 'beta'), join(root, 'gamma')]);
    expect(next.catalog.get('beta')!.files.find((f) => f.path === 'scripts/a.py')!.size).toBe(18);
    expect(next.catalog.get('gamma')!.files.map((f) => f.path)).toEqual([
      'SKILL.md',
      'references/guide.md',
      'references/more.md',
    ]);
    expectAsWithoutCache(next.catalog);
    // Saved as read again: the next start finds nothing changed.
    expect(startInTwo().changed.size).toBe(0);
  });

  it('reads a folder whose skill file or own entries changed at once, not later', () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    write('beta/SKILL.md', skillMd('beta'));
    write('gamma/SKILL.md', skillMd('gamma'));
    start();
    writeFileSync(join(root, 'alpha', 'SKILL.md'), skillMd('alpha', 'Edited to another size.'));
    write('beta/scripts/main.py', 'print(1)\n');
    rmSync(join(root, 'gamma', 'SKILL.md'));
    const next = startInTwo();
    expect(next.unchecked).toEqual([]);
    expect(next.changed.size).toBe(0);
    expect(readSkillBody(next.first.get('alpha')!)).toContain('Edited to another size.');
    expect(next.first.get('beta')!.kind).toBe('executable');
    expect(next.first.skills.map((s) => s.name)).toEqual(['alpha', 'beta']);
    expectAsWithoutCache(next.catalog);
  });
});

describe('a catalog cache that cannot be trusted is not used', () => {
  const file = () => catalogCacheFile(state, { build: BUILD, roots: [root] });
  beforeEach(() => {
    write('alpha/SKILL.md', skillMd('alpha'));
    write('beta/SKILL.md', skillMd('beta'));
    start();
    expect(start().reused).toBe(2);
  });

  /** Rewrites the payload and fixes the header's length and digest, as only someone writing on purpose would. */
  const forge = (edit: (payload: { roots: string[]; loads: Record<string, unknown>[] }) => void) => {
    const bytes = readFileSync(file());
    const nl = bytes.indexOf(0x0a);
    const header = JSON.parse(bytes.subarray(0, nl).toString()) as Record<string, unknown>;
    const payload = JSON.parse(bytes.subarray(nl + 1).toString()) as Parameters<typeof edit>[0];
    edit(payload);
    const body = Buffer.from(JSON.stringify(payload));
    header.bytes = body.length;
    header.sha256 = createHash('sha256').update(body).digest('base64');
    writeFileSync(file(), Buffer.concat([Buffer.from(`${JSON.stringify(header)}\n`), body]), { mode: 0o600 });
  };

  it.each([
    ['corrupted', (b: Buffer) => Buffer.from(b.toString().replace('alpha', 'alphx')), 'digest mismatch'],
    ['truncated', (b: Buffer) => b.subarray(0, b.length - 10), 'truncated or extended'],
    ['empty', () => Buffer.alloc(0), 'no header line'],
    ['foreign', () => Buffer.from('{"hello":"world"}\n[]'), 'not a catalog cache'],
    [
      'from another version of the format',
      (b: Buffer) => Buffer.from(b.toString().replace('"version":1', '"version":0')),
      'another version of the format',
    ],
    [
      'from another build',
      (b: Buffer) => Buffer.from(b.toString().replace(`"build":"${BUILD}"`, '"build":"older"')),
      'written by another build',
    ],
  ])('%s', (_what, mangle, problem) => {
    writeFileSync(file(), mangle(readFileSync(file())));
    const next = start();
    expect(next.reused).toBe(0);
    expectAsWithoutCache(next.catalog);
    // The start replaced it with a good one.
    expect(start().reused).toBe(2);
    writeFileSync(file(), mangle(readFileSync(file())));
    expect(readCatalogCache(file(), { build: BUILD, roots: [root] }).problem).toBe(problem);
  });

  it('for other roots', () => {
    const other = readCatalogCache(file(), { build: BUILD, roots: [join(t.dir, 'elsewhere')] });
    expect(other).toEqual({ loads: new Map(), problem: 'written for other roots' });
  });

  it('when others may write it, or it is a symlink', () => {
    chmodSync(file(), 0o622);
    expect(start().reused).toBe(0);
    const real = `${file()}.real`;
    renameSync(file(), real);
    chmodSync(real, 0o600);
    symlinkSync(real, file());
    expect(readCatalogCache(file(), { build: BUILD, roots: [root] }).problem).toMatch(/cannot open it/);
  });

  it('record by record: one of an unexpected shape is read again, the others are reused', () => {
    forge((p) => {
      const first = p.loads[0] as { skill: { files: { path: string }[] } };
      first.skill.files[0]!.path = '../../../etc/passwd';
    });
    const next = start();
    expect(next.reused).toBe(1);
    expectAsWithoutCache(next.catalog);
  });

  it.each([
    ['its folder', (l: { dir?: string }, outside: string) => (l.dir = outside)],
    ['its folder name', (l: { folderName?: string }) => (l.folderName = '../outside')],
  ])('its folders are never the candidates when one is not a plain folder of the root (%s)', (_, change) => {
    const outside = join(t.dir, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'SKILL.md'), skillMd('outside'));
    forge((p) => {
      expect(p).toHaveProperty('listing');
      change(p.loads[1] as { dir?: string; folderName?: string }, outside);
    });
    const next = start();
    expect(next.listed).toBe(false);
    expect(next.catalog.skills.map((k) => k.name)).toEqual(['alpha', 'beta']);
    expectAsWithoutCache(next.catalog);
  });

  it('stamps that no longer match what is on disk are read again', () => {
    forge((p) => {
      for (const l of p.loads as { folders: { ino: number }[] }[]) l.folders[0]!.ino += 1;
    });
    expect(start().reused).toBe(0);
  });

  it('a crash while writing leaves no file under the name, only a temporary one that is never read', () => {
    rmSync(file());
    writeFileSync(`${join(state, 'catalog-cache')}/.${file().split('/').pop()}.1234.abcd.tmp`, '{"partial"');
    const next = start();
    expect(next.reused).toBe(0);
    expectAsWithoutCache(next.catalog);
  });
});
