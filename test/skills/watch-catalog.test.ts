import { mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadCatalog, loadsOf, type Catalog } from '../../src/skills/catalog.js';
import type { CatalogDiff } from '../../src/skills/diff-catalogs.js';
import { SETTLE_MS } from '../../src/skills/folder-load.js';
import { watchCatalog, type CatalogWatcher } from '../../src/skills/watch-catalog.js';
import { waitFor } from '../helpers/wait-for.js';
import { tempDir } from '../helpers/temp-dir.js';

/**
 * The watcher as `serve` runs it, in-process over a real temp folder and real file system watches: the catalog is
 * loaded, the watcher starts, and the test changes files and waits for the reload each change must cause.
 */
const skillMd = (name: string, body = 'Do the thing.') =>
  `---\nname: ${name}\ndescription: The ${name} skill. Use it in tests.\n---\n\n# ${name}\n\n${body}\n`;

let t: ReturnType<typeof tempDir>;
let root: string;
let running: CatalogWatcher | undefined;
beforeEach(() => {
  t = tempDir();
  root = join(t.dir, 'skills');
  mkdirSync(root);
});
afterEach(() => {
  running?.close();
  running = undefined;
  t.cleanup();
});

const write = (rel: string, text: string) => {
  mkdirSync(join(root, rel, '..'), { recursive: true });
  writeFileSync(join(root, rel), text);
};

/** A logger that keeps every line it is given. */
function capturingLogger() {
  const lines: { msg?: string; level: number; [k: string]: unknown }[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n')) if (l !== '') lines.push(JSON.parse(l));
      done();
    },
  });
  return { log: pino({ level: 'debug' }, stream), lines };
}

/**
 * Loads the catalog and watches it. `now` judges the first load's stamps: a clock ahead keeps them, as for files
 * that have not changed in a while (reloads use the real clock).
 */
function serve(now?: () => number) {
  const { log, lines } = capturingLogger();
  let catalog: Catalog = loadCatalog([root], { reuse: new Map(), ...(now === undefined ? {} : { now }) });
  // With a clock ahead the load trusts stamps taken moments after a change: let the test's next change come in a
  // later clock tick than the root's last one, as a real start would have waited.
  if (now !== undefined) while (Date.now() <= statSync(root).ctimeMs + 20);
  const changes: CatalogDiff[] = [];
  let loads = 0;
  const watcher = watchCatalog({
    roots: [root],
    load: () => {
      loads++;
      return loadCatalog([root], { reuse: loadsOf(catalog) });
    },
    current: () => catalog,
    onChange: (next, diff) => {
      catalog = next;
      changes.push(diff);
      watcher.sync();
    },
    onReread: (next) => {
      catalog = next;
      watcher.sync();
    },
    log,
    debounceMs: 30,
  });
  running = watcher;
  /** Resolves once a change naming `name` in `kind` was handed on. */
  const seen = (kind: keyof CatalogDiff, name: string, what = `${kind} ${name}`) =>
    waitFor(() => changes.some((d) => d[kind].includes(name)), 10_000, what);
  return {
    watcher,
    changes,
    lines,
    seen,
    loads: () => loads,
    catalog: () => catalog,
    /** Resolves once the watches of the first catalog are in place and checked. */
    watching: () =>
      waitFor(() => lines.some((l) => l.msg === 'watching the skill folders'), 10_000, 'the watches'),
  };
}

const settled = () => Date.now() + SETTLE_MS + 1_000;

describe('hot reload, one watch per folder', () => {
  it('sees a file edited in a subfolder of a skill', async () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    write('alpha/scripts/deep/run.py', 'print(1)\n');
    const s = serve(settled);
    s.watcher.start();
    await s.watching();
    writeFileSync(join(root, 'alpha/scripts/deep/run.py'), 'print(2)\n');
    await s.seen('changed', 'alpha');
    const file = s
      .catalog()
      .get('alpha')
      ?.files.find((f) => f.path === 'scripts/deep/run.py');
    expect(file).toBeDefined();
    expect(s.catalog().get('alpha')?.kind).toBe('instruction');
  });

  it('sees a skill added, renamed and removed, and edits in the renamed folder', async () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    const s = serve(settled);
    s.watcher.start();
    await s.watching();

    write('beta/SKILL.md', skillMd('beta'));
    await s.seen('added', 'beta');

    renameSync(join(root, 'beta'), join(root, 'gamma'));
    await waitFor(
      () => s.catalog().get('beta')?.dir === join(root, 'gamma'),
      10_000,
      'beta served from gamma/',
    );

    // The renamed folder is watched at its new path: a new subfolder, then a file in it.
    mkdirSync(join(root, 'gamma', 'references'));
    await waitFor(
      () =>
        s
          .catalog()
          .folders.some((f) => f.dir === join(root, 'gamma') && (f.walked ?? []).includes('references')),
      10_000,
      'the new subfolder in the catalog',
    );
    const before = s.changes.length;
    writeFileSync(join(root, 'gamma', 'references', 'notes.md'), '# Notes\n');
    await waitFor(
      () =>
        s
          .catalog()
          .get('beta')
          ?.files.some((f) => f.path === 'references/notes.md') === true,
      10_000,
      'the file in the new subfolder',
    );
    expect(s.changes.length).toBeGreaterThan(before);

    rmSync(join(root, 'gamma'), { recursive: true });
    await s.seen('removed', 'beta');
    expect(s.catalog().skills.map((k) => k.name)).toEqual(['alpha']);
  });

  it('sees a new subfolder of a skill and a file written into it later', async () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    const s = serve(settled);
    s.watcher.start();
    await s.watching();
    mkdirSync(join(root, 'alpha', 'scripts'));
    await waitFor(
      () => s.catalog().folders[0]?.walked?.includes('scripts') === true,
      10_000,
      'the new subfolder in the catalog',
    );
    // By now the reloads the new folder caused are done: only the new folder's own watch can see this file.
    await new Promise((r) => setTimeout(r, 300));
    writeFileSync(join(root, 'alpha', 'scripts', 'main.py'), 'print("hi")\n');
    await waitFor(() => s.catalog().get('alpha')?.kind === 'executable', 10_000, 'the new entry point');
    expect(s.catalog().get('alpha')?.entryPoint).toBe('scripts/main.py');
  });

  it('watches a folder removed and made again under the same name (its old watch followed the removed one)', async () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    write('alpha/scripts/run.py', 'print(1)\n');
    const s = serve(settled);
    s.watcher.start();
    await s.watching();
    rmSync(join(root, 'alpha/scripts'), { recursive: true });
    write('alpha/scripts/run.py', 'print(22)\n');
    await waitFor(
      () =>
        s
          .catalog()
          .get('alpha')
          ?.files.find((f) => f.path === 'scripts/run.py')?.size === 10,
      10_000,
      'the new scripts/ folder read',
    );
    // Once the reloads it caused are done, an edit in the new folder is seen through its own watch.
    await new Promise((r) => setTimeout(r, 300));
    writeFileSync(join(root, 'alpha/scripts/run.py'), 'print(333)\n');
    await waitFor(
      () =>
        s
          .catalog()
          .get('alpha')
          ?.files.find((f) => f.path === 'scripts/run.py')?.size === 11,
      10_000,
      'the edit in the new folder',
    );
  });

  it('keeps a working skill when an edit breaks it, and serves it again once fixed', async () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    write('beta/SKILL.md', skillMd('beta'));
    const s = serve(settled);
    s.watcher.start();
    await s.watching();
    writeFileSync(join(root, 'beta/SKILL.md'), '---\nname: [unclosed\n---\n');
    await s.seen('removed', 'beta');
    expect(s.catalog().skills.map((k) => k.name)).toEqual(['alpha']);
    writeFileSync(join(root, 'beta/SKILL.md'), skillMd('beta', 'Fixed.'));
    await waitFor(() => s.catalog().get('beta') !== undefined, 10_000, 'beta back');
  });

  it('sees what changed between the load and the watches being in place', async () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    write('alpha/scripts/run.py', 'print(1)\n');
    write('beta/SKILL.md', skillMd('beta'));
    const s = serve(settled);
    // After the load, before any watch: a file grows, a skill is added, another loses its skill file.
    writeFileSync(join(root, 'alpha/scripts/run.py'), 'print("longer")\n');
    write('late/SKILL.md', skillMd('late'));
    rmSync(join(root, 'beta/SKILL.md'));
    s.watcher.start();
    await s.seen('changed', 'alpha');
    await s.seen('added', 'late');
    await s.seen('removed', 'beta');
  });

  it('reads nothing again when nothing changed since the load', async () => {
    write('alpha/SKILL.md', skillMd('alpha'));
    write('alpha/scripts/run.py', 'print(1)\n');
    const s = serve(settled);
    s.watcher.start();
    await s.watching();
    // Longer than the debounce: a reload the check asked for would have run.
    await new Promise((r) => setTimeout(r, 300));
    expect(s.loads()).toBe(0);
    expect(s.lines.filter((l) => l.level >= 40)).toEqual([]);
  });

  it('reads a skill that changed moments before the load again once its watches are in place', async () => {
    // Written just now: the load keeps no stamps, so nothing but a fresh read can tell it is still the same.
    write('alpha/SKILL.md', skillMd('alpha'));
    const s = serve();
    expect(s.catalog().folders[0]?.stamps).toBeUndefined();
    s.watcher.start();
    await waitFor(() => s.loads() > 0, 10_000, 'a reload after the watches');
    writeFileSync(join(root, 'alpha/SKILL.md'), skillMd('alpha', 'Edited.'));
    await s.seen('changed', 'alpha');
  });
});
