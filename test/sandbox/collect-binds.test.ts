import { mkdirSync, realpathSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { collectBinds, emptyScope } from '../../src/sandbox/collect-binds.js';
import type { ResolvedInterpreter } from '../../src/sandbox/resolve-interpreter.js';
import type { SandboxPlan } from '../../src/sandbox/types.js';
import { tempDir } from '../helpers/temp-dir.js';

const interp: ResolvedInterpreter = {
  command: '/usr/bin/node',
  mounts: [],
  binDir: '/usr/bin',
  source: '/usr/bin',
};

const planFor = (o: Partial<SandboxPlan>): SandboxPlan => ({
  argv: ['node', 'main.js'],
  cwd: '/tmp',
  env: {},
  readOnlyPaths: [],
  writablePaths: [],
  network: 'none',
  limits: {
    wallTimeMs: 1000,
    cpuSeconds: 1,
    memoryMiB: 64,
    pids: 8,
    tmpfsMiB: 8,
    fileSizeMiB: 1,
    maxOutputBytes: 1024,
    openFiles: 64,
    allowSpawn: false,
  },
  profile: 'default',
  ...o,
});

/**
 * A workspace holding the server's state: `<ws>/state/bundles/<sha>` (the verified bundle copy, with its own
 * `node_modules`) and `<ws>/state/envs/<id>/node/node_modules` (the skill's environment, on `NODE_PATH`).
 */
function layout() {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const ws = realpathSync(t.dir);
  const bundle = join(ws, 'state', 'bundles', 'abc');
  const env = join(ws, 'state', 'envs', 'e1');
  const empty = join(ws, 'empty');
  for (const d of [join(bundle, 'node_modules', 'own'), join(env, 'node', 'node_modules', 'dep'), empty])
    mkdirSync(d, { recursive: true });
  return { ws, bundle, env, empty };
}

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const f of cleanups.splice(0)) f();
});

describe('collectBinds covers node_modules above the read-only paths', () => {
  it('mounts the empty folder over every node_modules folder above the bundle and the environment', () => {
    const { ws, bundle, env, empty } = layout();
    mkdirSync(join(ws, 'node_modules', 'fancy-format'), { recursive: true });
    mkdirSync(join(ws, 'state', 'node_modules'));
    mkdirSync(join(ws, 'state', 'envs', 'node_modules'));
    const binds = collectBinds(
      planFor({ readOnlyPaths: [bundle, env], workspace: { path: ws, write: false } }),
      interp,
      ['/usr'],
      undefined,
      empty,
    );
    const covered = binds.filter((b) => b.src === empty).map((b) => b.dest);
    expect(covered.sort()).toEqual(
      [
        join(ws, 'node_modules'),
        join(ws, 'state', 'envs', 'node_modules'),
        join(ws, 'state', 'node_modules'),
      ].sort(),
    );
    expect(binds.every((b) => b.src !== empty || !b.write)).toBe(true);
    // What the skill legitimately gets stays: its own hashed node_modules and its environment's packages.
    expect(covered).not.toContain(join(bundle, 'node_modules'));
    expect(covered.some((d) => d.startsWith(env))).toBe(false);
  });

  it('covers them in the workspace copy a writing run sees, as the copy has them', () => {
    const { ws, bundle, empty } = layout();
    const copy = tempDir();
    cleanups.push(copy.cleanup);
    mkdirSync(join(copy.dir, 'node_modules', 'fancy-format'), { recursive: true });
    const binds = collectBinds(
      planFor({ readOnlyPaths: [bundle], workspace: { path: ws, write: true } }),
      interp,
      ['/usr'],
      { dir: copy.dir },
      empty,
    );
    expect(binds).toContainEqual({ src: copy.dir, dest: ws, write: true });
    expect(binds).toContainEqual({ src: empty, dest: join(ws, 'node_modules'), write: false });
  });

  it('adds nothing where no folder above holds node_modules, or where the sandbox shows no such folder', () => {
    const { ws, bundle, empty } = layout();
    const onlyBundle = collectBinds(planFor({ readOnlyPaths: [bundle] }), interp, ['/usr'], undefined, empty);
    mkdirSync(join(ws, 'node_modules'));
    // Without the workspace mounted, `<ws>/node_modules` does not exist inside the sandbox.
    const noWorkspace = collectBinds(
      planFor({ readOnlyPaths: [bundle] }),
      interp,
      ['/usr'],
      undefined,
      empty,
    );
    expect(onlyBundle).toEqual([{ src: bundle, dest: bundle, write: false }]);
    expect(noWorkspace).toEqual(onlyBundle);
  });

  it('refuses the run when a link named node_modules lies above the bundle (a mount would land where it points)', () => {
    const { ws, bundle, empty } = layout();
    mkdirSync(join(ws, 'elsewhere'));
    symlinkSync(join(ws, 'elsewhere'), join(ws, 'node_modules'));
    expect(() =>
      collectBinds(
        planFor({ readOnlyPaths: [bundle], workspace: { path: ws, write: false } }),
        interp,
        ['/usr'],
        undefined,
        empty,
      ),
    ).toThrow(/link named node_modules/);
  });

  it('refuses the run when the workspace lies in a node_modules folder above the bundle', () => {
    const { ws, bundle, empty } = layout();
    const inside = join(ws, 'node_modules', 'fancy-format');
    mkdirSync(inside, { recursive: true });
    expect(() =>
      collectBinds(
        planFor({ readOnlyPaths: [bundle], workspace: { path: inside, write: false } }),
        interp,
        ['/usr'],
        undefined,
        empty,
      ),
    ).toThrow(/workspace lies in a node_modules folder/);
  });

  it('ignores a plain file named node_modules (Node finds no package through it)', () => {
    const { ws, bundle, empty } = layout();
    writeFileSync(join(ws, 'node_modules'), 'not a folder');
    const binds = collectBinds(
      planFor({ readOnlyPaths: [bundle], workspace: { path: ws, write: false } }),
      interp,
      ['/usr'],
      undefined,
      empty,
    );
    expect(binds.some((b) => b.src === empty)).toBe(false);
  });

  it("mounts {} over every package.json above the bundle (Node would take it as the script's package)", () => {
    const { ws, bundle, empty } = layout();
    writeFileSync(emptyScope(empty), '{}\n');
    writeFileSync(join(ws, 'package.json'), '{"name":"fancy-format","exports":"./evil.js"}');
    writeFileSync(join(bundle, 'package.json'), '{"type":"module"}');
    const binds = collectBinds(
      planFor({ readOnlyPaths: [bundle], workspace: { path: ws, write: false } }),
      interp,
      ['/usr'],
      undefined,
      empty,
    );
    expect(binds).toContainEqual({ src: emptyScope(empty), dest: join(ws, 'package.json'), write: false });
    expect(binds.some((b) => b.dest === join(bundle, 'package.json'))).toBe(false);
  });

  it('refuses the run when a link named package.json lies above the bundle', () => {
    const { ws, bundle, empty } = layout();
    writeFileSync(join(ws, 'elsewhere.json'), '{}');
    symlinkSync(join(ws, 'elsewhere.json'), join(ws, 'package.json'));
    expect(() =>
      collectBinds(
        planFor({ readOnlyPaths: [bundle], workspace: { path: ws, write: false } }),
        interp,
        ['/usr'],
        undefined,
        empty,
      ),
    ).toThrow(/link named package.json/);
  });
});
