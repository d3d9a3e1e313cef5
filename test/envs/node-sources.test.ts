import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { checkInstalledSources, checkNodeLock } from '../../src/envs/check-node-lock.js';
import { lockedManifest } from '../../src/envs/env-spec.js';
import { isUnderRegistry, normalizeRegistry } from '../../src/envs/npm-registry.js';
import { sealTree } from '../../src/envs/seal-tree.js';
import { readTarball, tarballManifests } from '../../src/envs/tarball-manifests.js';
import { craftTarball, paxRecord, type TarEntry } from '../helpers/build-packages.js';
import { removeTree } from '../../src/envs/env-store.js';

const REG = 'https://npm.example.test/repo/';
const lock = (entry: Record<string, unknown>, key = 'node_modules/tiny') =>
  JSON.stringify({ lockfileVersion: 3, packages: { '': { dependencies: { tiny: '1.0.0' } }, [key]: entry } });
const ok = { version: '1.0.0', resolved: `${REG}tiny/-/tiny-1.0.0.tgz`, integrity: 'sha512-x' };

describe('where a lock file may make npm fetch from', () => {
  it.each([
    ['a registry tarball', lock(ok)],
    ['no resolved (fetched by name and version from the registry)', lock({ version: '1.0.0' })],
    ['a bundled package', lock({ inBundle: true }, 'node_modules/a/node_modules/tiny')],
  ])('accepts %s', (_, text) => expect(() => checkNodeLock(text, REG)).not.toThrow());

  it.each([
    [
      'another host',
      lock({ ...ok, resolved: 'https://evil.test/repo/tiny/-/tiny-1.0.0.tgz' }),
      'resolves at',
    ],
    ['another port', lock({ ...ok, resolved: 'https://npm.example.test:444/repo/tiny.tgz' }), 'resolves at'],
    [
      'a path beside the registry',
      lock({ ...ok, resolved: 'https://npm.example.test/other/t.tgz' }),
      'resolves at',
    ],
    [
      'a climb out of it',
      lock({ ...ok, resolved: 'https://npm.example.test/repo/../x/t.tgz' }),
      'resolves at',
    ],
    [
      'credentials in the URL',
      lock({ ...ok, resolved: 'https://u:p@npm.example.test/repo/t.tgz' }),
      'resolves at',
    ],
    ['plain http', lock({ ...ok, resolved: 'http://npm.example.test/repo/t.tgz' }), 'resolves at'],
    ['git', lock({ ...ok, resolved: 'git+https://npm.example.test/repo/t.git' }), 'resolves at'],
    ['a local file', lock({ ...ok, resolved: 'file:vendor/tiny.tgz' }), 'resolves at'],
    ['a link', lock({ resolved: '../../outside', link: true }), 'is a link'],
    ['a link target', lock({ version: '1.0.0' }, '../outside'), 'not an installed package'],
    ['a workspace folder', lock({ version: '1.0.0' }, 'packages/a'), 'not an installed package'],
    ['a URL as version', lock({ version: 'https://evil.test/t.tgz' }), 'no plain version'],
    ['a URL dependency', lock({ ...ok, dependencies: { e: 'https://evil.test/e.tgz' } }), 'not a registry'],
    ['an alias dependency', lock({ ...ok, dependencies: { e: 'npm:evil@1' } }), 'not a registry'],
    ['a dot-path dependency (a folder to npm)', lock({ ...ok, dependencies: { e: '..' } }), 'not a registry'],
    [
      'a bundled entry resolved elsewhere (npm fetches it when no parent ships it)',
      lock({ ...ok, inBundle: true, resolved: 'https://evil.test/t.tgz' }),
      'resolves at',
    ],
    ['a lock of npm 6', JSON.stringify({ lockfileVersion: 1, dependencies: {} }), 'npm 6'],
  ])('refuses %s', (_, text, why) => {
    expect(() => checkNodeLock(text, REG)).toThrow(why);
  });

  it('never shows credentials of a resolved URL', () => {
    const text = lock({ ...ok, resolved: 'https://user:SECRET-TOKEN@evil.test/t.tgz' });
    expect(() => checkNodeLock(text, REG)).toThrow(/\*\*\*@evil\.test/);
    expect(() => checkNodeLock(text, REG)).not.toThrow(/SECRET-TOKEN/);
  });

  it('normalizes the registry and compares scheme, host, port and path', () => {
    expect(normalizeRegistry('https://npm.example.test/repo')).toBe(REG);
    expect(() => normalizeRegistry('file:///srv/npm')).toThrow(/http\(s\)/);
    expect(isUnderRegistry(`${REG}a/-/a-1.tgz`, REG)).toBe(true);
    expect(isUnderRegistry('https://npm.example.test/repository/a.tgz', REG)).toBe(false);
  });
});

describe('the package.json npm ci is given with a lock', () => {
  const base = { name: 's', version: '1.0.0', dependencies: { tiny: '1.0.0' } };

  it('keeps the name, version and dependency fields, and nothing else', () => {
    const text = JSON.stringify({
      ...base,
      devDependencies: { t: '^2' },
      scripts: { preinstall: 'x' },
      bundleDependencies: ['tiny'],
    });
    expect(JSON.parse(lockedManifest(text))).toEqual({
      private: true,
      ...base,
      devDependencies: { t: '^2' },
    });
  });

  it.each([
    [
      'an optional dependency at a URL',
      { optionalDependencies: { e: 'http://127.0.0.1:9/e.tgz' } },
      /optionalDependencies/,
    ],
    ['a dev dependency on git', { devDependencies: { e: 'git+https://host/e.git' } }, /devDependencies/],
    ['a peer dependency on a folder', { peerDependencies: { e: '..' } }, /peerDependencies/],
    ['overrides', { overrides: { tiny: 'http://127.0.0.1:9/e.tgz' } }, /overrides/],
    ['workspaces', { workspaces: ['../x'] }, /workspaces/],
  ])('refuses %s', (_, extra, why) => {
    expect(() => lockedManifest(JSON.stringify({ ...base, ...extra }))).toThrow(why);
  });
});

describe('what npm recorded it installed (node_modules/.package-lock.json)', () => {
  const rec = (packages: Record<string, unknown>) => JSON.stringify({ lockfileVersion: 3, packages });
  const check = (text: string | undefined) => () => checkInstalledSources(text, REG, '.skills-mcp-vendor');

  it('accepts registry packages and the vendored copies', () => {
    expect(
      check(
        rec({
          'node_modules/tiny': ok,
          'node_modules/v': { version: '1.0.0', resolved: 'file:.skills-mcp-vendor/0.tgz' },
          'node_modules/w': { version: '1.0.0', resolved: 'file:.skills-mcp-vendor/1' },
        }),
      ),
    ).not.toThrow();
  });

  it.each([
    [
      'a package from a shrinkwrap naming another server',
      rec({ 'node_modules/a/node_modules/t': { ...ok, resolved: 'http://127.0.0.1:9/t.tgz' } }),
      /from "http:\/\/127/,
    ],
    [
      'a folder beside the vendored copies',
      rec({ 'node_modules/v': { resolved: 'file:../outside' } }),
      /not the operator/,
    ],
    ['a link', rec({ 'node_modules/v': { link: true, resolved: '../x' } }), /as a link/],
    [
      'a URL as version, without resolved (npm fetched it)',
      rec({ 'node_modules/a/node_modules/t': { version: 'http://127.0.0.1:9/t.tgz' } }),
      /not a registry version/,
    ],
    ['no record at all', undefined, /no record/],
  ])('refuses %s', (_, text, why) => expect(check(text)).toThrow(why));
});

describe('sealing refuses links that leave the environment (judged lexically, never followed)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skills-mcp-seal-'));
  afterAll(() => removeTree(dir));
  const tree = (links: Record<string, string>) => {
    const root = mkdtempSync(join(dir, 't-'));
    mkdirSync(join(root, 'node', 'node_modules', 'tiny', 'bin'), { recursive: true });
    writeFileSync(join(root, 'node', 'node_modules', 'tiny', 'bin', 'cli.js'), '');
    mkdirSync(join(root, 'node', 'node_modules', '.bin'));
    for (const [at, target] of Object.entries(links)) symlinkSync(target, join(root, at));
    return root;
  };

  it.each([
    ['a .bin link', { 'node/node_modules/.bin/tiny': '../tiny/bin/cli.js' }],
    [
      'a chain through another link',
      { 'node/t': 'node_modules/tiny', 'node/node_modules/.bin/x': '../../t/bin/cli.js' },
    ],
    ['a dangling link inside', { 'node/gone': 'node_modules/none/x' }],
  ])('keeps %s', (_, links) => expect(() => sealTree(tree(links))).not.toThrow());

  it.each([
    ['an absolute link', { 'node/node_modules/tiny/x': '/etc/passwd' }],
    ['a relative climb above the tree', { 'node/node_modules/tiny/x': '../../../../outside' }],
    [
      'a climb through a link to a shallower folder',
      { 'node/up': '..', 'node/node_modules/x': '../up/../..' },
    ],
    [
      'a link that leaves, reached through another',
      { 'node/out': '/tmp', 'node/node_modules/x': '../out/y' },
    ],
  ])('refuses %s, naming it', (_, links) => {
    const root = tree(links);
    expect(() => sealTree(root)).toThrow(/leaves the environment/);
  });

  it('gives up on a loop of links as the kernel would (ELOOP), without hanging', () => {
    const root = tree({ 'node/a': 'b/x', 'node/b': 'a/y' });
    expect(() => sealTree(root)).toThrow(/leaves the environment/);
    expect(readlinkSync(join(root, 'node/a'))).toBe('b/x');
  });
});

describe('the manifests of a vendored tarball', () => {
  const dir = mkdtempSync(join(tmpdir(), 'skills-mcp-tgz-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('finds package/package.json, also under a long (pax) name, and nothing deeper', () => {
    const long = `p${'x'.repeat(120)}`;
    for (const top of ['package', long]) {
      mkdirSync(join(dir, top, 'node_modules', 'dep'), { recursive: true });
      writeFileSync(join(dir, top, 'package.json'), `{"name":"${top.slice(0, 8)}"}`);
      writeFileSync(join(dir, top, 'node_modules', 'dep', 'package.json'), '{"name":"dep"}');
    }
    const tar = (top: string) => gzipSync(execFileSync('tar', ['-c', '--format=pax', '-C', dir, top]));
    expect(tarballManifests(tar('package'))).toEqual(['{"name":"package"}']);
    expect(tarballManifests(tar(long))).toEqual([`{"name":"${long.slice(0, 8)}"}`]);
    expect(tarballManifests(Buffer.from('not a tarball'))).toBeUndefined();
  });
  const good = '{"name":"tiny","version":"1.0.0"}';
  const evil = '{"name":"tiny","dependencies":{"evil":"http://127.0.0.1:9/e.tgz"}}';
  const manifest: TarEntry = { name: 'package/package.json', data: good };

  it.each<[string, (TarEntry | null)[], RegExp]>([
    [
      'a contiguous-file entry (npm’s tar reads it as a file)',
      [manifest, { ...manifest, data: evil, type: '7' }],
      /tar type "7"/,
    ],
    [
      'a pax header naming the path twice (npm’s tar keeps the last)',
      [
        manifest,
        {
          name: 'P',
          type: 'x',
          data: paxRecord('path', 'package/README') + paxRecord('path', 'package/package.json'),
        },
        { name: 'package/README', data: evil },
      ],
      /twice/,
    ],
    [
      'a GNU header with a prefix field (npm’s tar ignores it)',
      [manifest, { ...manifest, data: evil, magic: 'ustar  \0', prefix: 'x' }],
      /prefix field/,
    ],
    [
      'entries after a lone zero block (npm’s tar reads on)',
      [manifest, null, { ...manifest, data: evil }],
      /after its end/,
    ],
    [
      'a pax header overriding a size',
      [{ name: 'P', type: 'x', data: paxRecord('size', '0') }, manifest],
      /size/,
    ],
    ['an entry climbing out', [manifest, { name: 'package/../../x', data: 'x' }], /climbing out/],
  ])('refuses %s', (_, entries, why) => {
    expect(() => readTarball(craftTarball(entries))).toThrow(why);
    expect(tarballManifests(craftTarball(entries))).toBeUndefined();
  });

  it('gives npm an archive rebuilt from what it read: the last manifest of a path, plain files only', () => {
    const t = readTarball(
      craftTarball([
        manifest,
        { name: 'package/bin/x', data: '#!/bin/sh\n' },
        { ...manifest, data: '{"name":"last"}' },
      ]),
    );
    expect(t.manifests).toEqual([good, '{"name":"last"}']);
    const again = readTarball(t.repacked());
    expect(again.manifests).toEqual(['{"name":"last"}']);
    const listed = execFileSync('tar', ['-tzf', '-'], { input: t.repacked(), encoding: 'utf8' });
    expect(listed.trim().split('\n').sort()).toEqual(['package/bin/x', 'package/package.json']);
  });
});
