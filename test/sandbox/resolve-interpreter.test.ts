import { execFileSync } from 'node:child_process';
import { chmod, mkdir, realpath, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isSkillsError } from '../../src/errors.js';
import {
  createInterpreterResolver,
  findOnPath,
  installPrefix,
  interpreterForScript,
} from '../../src/sandbox/resolve-interpreter.js';
import { tempDirs } from './helpers.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

async function executable(dir: string, name: string, body: string): Promise<string> {
  const p = join(dir, name);
  await writeFile(p, body);
  await chmod(p, 0o755);
  return p;
}

describe('interpreterForScript', () => {
  it.each([
    ['scripts/main.py', 'python3'],
    ['a/b.JS', 'node'],
    ['x.mjs', 'node'],
    ['x.cjs', 'node'],
    ['run.sh', 'bash'],
    ['run.bash', 'bash'],
    ['main.rb', undefined],
    ['Makefile', undefined],
  ])('%s → %s', (file, expected) => {
    expect(interpreterForScript(file)).toBe(expected);
  });
});

describe('findOnPath', () => {
  it('ignores empty and relative PATH entries (they would mean the working directory)', async () => {
    const abs = await dirs.make();
    const found = await executable(abs, 'tool', '#!/bin/sh\n');
    expect(await findOnPath('tool', `::.:relative/dir:${abs}`)).toBe(found);
    expect(await findOnPath('tool', '.:')).toBeUndefined();
  });
});

describe('installPrefix', () => {
  it('is the parent of a bin folder, else the folder', () => {
    expect(installPrefix('/root/.pyenv/versions/3.11.7/bin/python3.11')).toBe('/root/.pyenv/versions/3.11.7');
    expect(installPrefix('/opt/tool/tool')).toBe('/opt/tool');
  });
});

describe('createInterpreterResolver', () => {
  it('sees through a shell shim on PATH to the real python executable', async () => {
    const shims = await dirs.make();
    const shim = await executable(shims, 'python3', '#!/bin/sh\nexec /usr/bin/python3 "$@"\n');
    const r = await createInterpreterResolver({ PATH: shims }).resolve('python3');
    expect(r.command).toBe(await realpath('/usr/bin/python3'));
    expect(r.source).toBe(shim);
    expect(r.mounts).toEqual([]); // under /usr: already visible
  });

  it('finds an interpreter installed outside /usr and lists its prefix to mount', async () => {
    const home = await dirs.make();
    const venv = join(home, 'venv');
    execFileSync('/usr/bin/python3', ['-m', 'venv', '--copies', '--without-pip', venv]);
    const r = await createInterpreterResolver({ PATH: join(venv, 'bin') }).resolve('python3');
    expect(r.command).toBe(join(await realpath(venv), 'bin', 'python3'));
    expect(r.mounts).toContain(await realpath(venv));
    expect(r.binDir).toBe(join(await realpath(venv), 'bin'));
  });

  it('always uses the system bash and sh', async () => {
    const r = await createInterpreterResolver({ PATH: '' }).resolve('bash');
    expect(r.command).toBe(await realpath('/bin/bash'));
  });

  it('caches answers and reports a missing interpreter as RUNNER_UNSUPPORTED', async () => {
    const empty = await dirs.make();
    await mkdir(join(empty, 'sub'));
    const resolver = createInterpreterResolver({ PATH: empty });
    const err = await resolver.resolve('python3').catch((e: unknown) => e);
    expect(isSkillsError(err) && err.code).toBe('RUNNER_UNSUPPORTED');
    const a = createInterpreterResolver({ PATH: '/usr/bin' });
    expect(a.resolve('node')).toBe(a.resolve('node'));
  });
});
