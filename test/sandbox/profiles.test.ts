import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isSkillsError } from '../../src/errors.js';
import {
  defaultProfilesDir,
  listProfiles,
  loadProfile,
  parseProfile,
} from '../../src/sandbox/load-profile.js';
import { looserFields, resolveProfile } from '../../src/sandbox/resolve-profile.js';
import { filterEnv } from '../../src/sandbox/filter-env.js';
import { tempDirs } from './helpers.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const catchCode = async (p: Promise<unknown>) => {
  try {
    await p;
    return 'resolved';
  } catch (e) {
    return isSkillsError(e) ? e.code : 'other';
  }
};

describe('shipped profiles', () => {
  it('ships default, install, network and strict, all valid', async () => {
    const dir = defaultProfilesDir();
    expect(await listProfiles(dir)).toEqual(['default', 'install', 'network', 'strict']);
    const d = await loadProfile(dir, 'default');
    expect(d).toMatchObject({ name: 'default', sandbox: 'required', network: 'none', wallTimeMs: 30_000 });
  });

  it('install has the host network and room for package builds', async () => {
    const i = await loadProfile(defaultProfilesDir(), 'install');
    expect(i).toMatchObject({ name: 'install', sandbox: 'required', network: 'full', allowSpawn: true });
    expect(i.wallTimeMs).toBeGreaterThan(30_000);
  });

  it('network differs from default only by the network and proxy variables', async () => {
    const dir = defaultProfilesDir();
    const d = await loadProfile(dir, 'default');
    const n = await loadProfile(dir, 'network');
    expect(n.network).toBe('full');
    expect(looserFields(n, d)).toEqual(['network', 'env.allow']);
    expect(n.env.allow.filter((k) => !d.env.allow.includes(k)).every((k) => /proxy/i.test(k))).toBe(true);
  });

  it('strict is at least as strict as default everywhere and forbids spawning', async () => {
    const dir = defaultProfilesDir();
    const s = await loadProfile(dir, 'strict');
    expect(looserFields(s, await loadProfile(dir, 'default'))).toEqual([]);
    expect(s.allowSpawn).toBe(false);
    expect(s.env.allow).toEqual([]);
  });
});

describe('loadProfile', () => {
  it.each(['../default', '..', 'Default', 'a/b', '', 'default.yaml', 'x'.repeat(65), 'a\nb'])(
    'rejects the profile name %j before touching the disk',
    async (name) => {
      expect(await catchCode(loadProfile(defaultProfilesDir(), name))).toBe('SANDBOX_PROFILE_INVALID');
    },
  );

  it('reports every invalid field as a path: message line', async () => {
    const dir = await dirs.make();
    await writeFile(
      join(dir, 'bad.yaml'),
      'description: x\nsandbox: maybe\nnetwork: none\nwallTimeMs: -1\ncpuSeconds: 1\nmemoryMiB: 64\npids: 8\ntmpfsMiB: 1\nfileSizeMiB: 1\nmaxOutputBytes: 2048\nextra: 1\n',
    );
    const err = await loadProfile(dir, 'bad').catch((e: unknown) => e);
    expect(isSkillsError(err) && err.code).toBe('SANDBOX_PROFILE_INVALID');
    const msg = (err as Error).message;
    expect(msg).toMatch(/^sandbox: /m);
    expect(msg).toMatch(/^wallTimeMs: /m);
    expect(msg).toMatch(/^\(root\): .*extra/m);
  });

  it('rejects invalid YAML and duplicate keys', async () => {
    const dir = await dirs.make();
    await writeFile(join(dir, 'dup.yaml'), 'network: none\nnetwork: full\n');
    await writeFile(join(dir, 'broken.yaml'), 'network: [none\n');
    expect(await catchCode(loadProfile(dir, 'dup'))).toBe('SANDBOX_PROFILE_INVALID');
    expect(await catchCode(loadProfile(dir, 'broken'))).toBe('SANDBOX_PROFILE_INVALID');
  });

  it('reports a missing profile with the same code', async () => {
    expect(await catchCode(loadProfile(await dirs.make(), 'nope'))).toBe('SANDBOX_PROFILE_INVALID');
  });
});

describe('resolveProfile', () => {
  const base = parseProfile('base', {
    description: 'base',
    sandbox: 'required',
    network: 'none',
    wallTimeMs: 30_000,
    cpuSeconds: 30,
    memoryMiB: 1024,
    pids: 256,
    tmpfsMiB: 256,
    fileSizeMiB: 256,
    maxOutputBytes: 1_048_576,
    env: { allow: ['LANG', 'LC_*'] },
  });
  const { name: _name, ...baseConfig } = base;
  const variant = (over: Record<string, unknown>) => parseProfile('variant', { ...baseConfig, ...over });

  it('uses the operator default when the skill asks for nothing', () => {
    expect(resolveProfile(base)).toEqual({ profile: base, looser: [] });
  });

  it('grants a request that is stricter in every field', () => {
    const r = resolveProfile(
      base,
      variant({ memoryMiB: 128, allowSpawn: false, env: { allow: ['LC_ALL'] } }),
    );
    expect(r.profile.name).toBe('variant');
    expect(r.looser).toEqual([]);
  });

  it.each([
    [{ network: 'full' }, ['network']],
    [{ sandbox: 'off' }, ['sandbox']],
    [{ wallTimeMs: 60_000, memoryMiB: 2048 }, ['wallTimeMs', 'memoryMiB']],
    [{ env: { allow: ['AWS_SECRET_ACCESS_KEY'] } }, ['env.allow']],
    [{ env: { allow: ['L*'] } }, ['env.allow']],
  ])('refuses a looser request %j and keeps the operator default', (over, fields) => {
    const r = resolveProfile(base, variant(over));
    expect(r.profile).toBe(base);
    expect(r.requested).toBe('variant');
    expect(r.looser).toEqual(fields);
  });
});

describe('filterEnv', () => {
  it('keeps only allowed names and prefixes', () => {
    expect(filterEnv({ LANG: 'C', LC_ALL: 'C', SECRET: 's', PATH: '/x' }, ['LANG', 'LC_*'])).toEqual({
      LANG: 'C',
      LC_ALL: 'C',
    });
  });
});
