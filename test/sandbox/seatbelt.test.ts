import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isSkillsError } from '../../src/errors.js';
import { defaultProfilesDir } from '../../src/sandbox/load-profile.js';
import { seatbeltArgv, seatbeltParams, SEATBELT_SLOTS } from '../../src/sandbox/seatbelt-params.js';
import { LIMITS, newSandbox, plan, tempDirs, text } from './helpers.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const sb = (name: string) => readFile(join(defaultProfilesDir(), `${name}.sb`), 'utf8');
/** Profile text without comments. */
const rules = (s: string) =>
  s
    .split('\n')
    .filter((l) => !l.trim().startsWith(';;'))
    .join('\n');

const SYSTEM_LITERALS = new Set([
  '/',
  '/usr',
  '/bin',
  '/sbin',
  '/System',
  '/Library/Apple',
  '/private/var/db/timezone',
  '/private/var/db/dyld',
  '/private/etc/localtime',
  '/dev/null',
  '/dev/zero',
  '/dev/random',
  '/dev/urandom',
  '/private/etc/hosts',
  '/private/etc/resolv.conf',
  '/private/etc/services',
  '/private/var/run/resolv.conf',
  '/private/etc/ssl',
]);

describe('seatbelt profiles', () => {
  it.each(['default', 'network', 'strict'])(
    '%s.sb denies by default and reads paths only from parameters',
    async (n) => {
      const r = rules(await sb(n));
      expect(r).toMatch(/^\(version 1\)\n\(deny default\)/m);
      const literals = [...r.matchAll(/\((?:subpath|literal) "([^"]*)"\)/g)].map((m) => m[1]);
      expect(literals.filter((l) => !SYSTEM_LITERALS.has(l!))).toEqual([]);
      const params = new Set([...r.matchAll(/\(param "([A-Z_0-9]+)"\)/g)].map((m) => m[1]));
      expect([...params].sort()).toEqual(
        Object.keys(seatbeltParams({ readOnly: [], writable: [], tmpDir: '/t' })).sort(),
      );
    },
  );

  it('grants network only in network.sb', async () => {
    expect(rules(await sb('network'))).toContain('(allow network*)');
    expect(rules(await sb('default'))).not.toMatch(/network/);
    expect(rules(await sb('strict'))).not.toMatch(/network/);
  });

  it('strict.sb is default.sb without process-fork', async () => {
    const d = rules(await sb('default'));
    const s = rules(await sb('strict'));
    expect(s).not.toContain('(allow process-fork)');
    expect(d.replace('(allow process-fork)\n', '')).toBe(s);
  });
});

describe('seatbeltParams', () => {
  it('fills every slot, unused ones with /dev/null', () => {
    const p = seatbeltParams({
      readOnly: ['/opt/skill'],
      writable: ['/private/tmp/out'],
      tmpDir: '/private/tmp/t',
    });
    expect(p.READ_ONLY_0).toBe('/opt/skill');
    expect(p[`READ_ONLY_${SEATBELT_SLOTS.readOnly - 1}`]).toBe('/dev/null');
    expect(p.WRITABLE_0).toBe('/private/tmp/out');
    expect(p.TMPDIR).toBe('/private/tmp/t');
  });

  it.each([
    'relative/path',
    '/a/../b',
    '/a/',
    '/with\nnewline',
    '/with"quote',
    "/with'quote",
    '/a\\b',
    '/(x)',
    '/',
  ])('rejects %j', (bad) => {
    let code = 'none';
    try {
      seatbeltParams({ readOnly: [bad], writable: [], tmpDir: '/t' });
    } catch (e) {
      code = isSkillsError(e) ? e.code : 'other';
    }
    expect(code).toBe('SANDBOX_FAILED');
  });

  it('refuses more paths than there are slots', () => {
    const many = Array.from({ length: SEATBELT_SLOTS.writable + 1 }, (_, i) => `/w${i}`);
    expect(() => seatbeltParams({ readOnly: [], writable: many, tmpDir: '/t' })).toThrow(/at most/);
  });
});

describe('seatbeltArgv', () => {
  it('passes the profile by file and paths as -D parameters, then the payload verbatim', () => {
    const argv = seatbeltArgv('/p/default.sb', { READ_ONLY_0: '/s', TMPDIR: '/t' }, [
      '/usr/bin/python3',
      '-c',
      '$(x)',
    ]);
    expect(argv).toEqual([
      '/usr/bin/sandbox-exec',
      '-f',
      '/p/default.sb',
      '-D',
      'READ_ONLY_0=/s',
      '-D',
      'TMPDIR=/t',
      '/usr/bin/python3',
      '-c',
      '$(x)',
    ]);
  });

  it('refuses a payload that does not start with an absolute path', () => {
    expect(() => seatbeltArgv('/p.sb', {}, ['python3'])).toThrow(/absolute/);
  });
});

describe('seatbelt adapter on macOS', () => {
  it.skipIf(process.platform !== 'darwin')(
    'runs a script that can read its skill folder and cannot write outside its output folder (macOS only: seatbelt cannot execute on Linux CI)',
    async () => {
      const skill = await dirs.make();
      const out = await dirs.make();
      await writeFile(join(skill, 'data.txt'), 'skill-data');
      const s = newSandbox();
      try {
        const r = await s.run(
          plan({
            argv: [
              '/bin/sh',
              '-c',
              'cat "$1/data.txt" && echo x > "$2/ok" && ! echo y > "$HOME/../escape"',
              'sh',
              skill,
              out,
            ],
            cwd: out,
            readOnlyPaths: [skill],
            writablePaths: [out],
            limits: LIMITS,
          }),
        );
        expect(text(r.stdout)).toContain('skill-data');
        expect(r.exitCode).toBe(0);
        expect(r.evidence.adapter).toBe('seatbelt');
      } finally {
        await s.dispose();
      }
    },
  );
});
