import { chmod, copyFile, mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe } from 'vitest';
import { isSkillsError } from '../../src/errors.js';
import { defaultProfilesDir, loadProfile } from '../../src/sandbox/load-profile.js';
import { profileLimits } from '../../src/sandbox/profile-schema.js';
import { resolveProfile } from '../../src/sandbox/resolve-profile.js';
import { exists, tcpListener } from './harness/host.js';
import { blockedIf, FORCED, securitySuite, type CaseContext } from './harness/security-case.js';

const { securityCase, securityControl } = securitySuite();

/** Normal mode: true when `p` fails with SANDBOX_DENIED. Forced mode: rethrows, as every case must. */
async function denied(p: Promise<unknown>): Promise<boolean> {
  try {
    await p;
    return false;
  } catch (e) {
    if (FORCED) throw e;
    return isSkillsError(e) && e.code === 'SANDBOX_DENIED';
  }
}

async function fakeBwrap(dir: string, body: string): Promise<string> {
  const p = join(dir, 'bwrap');
  await writeFile(p, `#!/bin/sh\n${body}\n`);
  await chmod(p, 0o755);
  return p;
}

/** Runs the network probe under `profile` and reports whether the host listener stayed untouched. */
async function networkBlocked(
  ctx: CaseContext,
  profile: Awaited<ReturnType<typeof loadProfile>>,
): Promise<boolean> {
  const l = await tcpListener();
  ctx.defer(() => l.close());
  ctx.untouched('listener saw no connection', () => l.connections === 0);
  const r = await ctx.probe<{ errno: number }>(
    'tcp',
    { port: l.port, allow_host_net: profile.network === 'full' },
    {
      plan: { network: profile.network, profile: profile.name, limits: profileLimits(profile) },
    },
  );
  return r.errno !== 0 && l.connections === 0;
}

describe('adapter', () => {
  securityControl(
    { id: 'adp-control', category: 'adapter', title: 'the adapter probes healthy and runs a script' },
    async (ctx) => {
      const r = await ctx.run('hello');
      return ctx.h.probeResult.healthy && r.exitCode === 0 && r.evidence.active;
    },
  );

  securityCase(
    { id: 'adp-bwrap-missing', category: 'adapter', title: 'bwrap missing with a required profile' },
    async (ctx) => {
      const out = await ctx.out();
      const canary = join(out, 'ran');
      ctx.untouched('script never ran', async () => !(await exists(canary)));
      const sb = ctx.h.newSandbox({ bwrapCandidates: ['/nonexistent/bwrap'] });
      const d = await denied(
        ctx.run('touch', { path: canary }, { sandbox: sb, plan: { writablePaths: [out] } }),
      );
      return blockedIf(d, `SANDBOX_DENIED: ${(await sb.probe()).diagnosis.message}; nothing spawned`);
    },
  );

  securityCase(
    {
      id: 'adp-bwrap-broken',
      category: 'adapter',
      title: 'bwrap present but failing (user namespaces disabled)',
    },
    async (ctx) => {
      const dir = await ctx.h.dirs.make('skills-mcp-sec-fakebwrap-');
      const bwrap = await fakeBwrap(
        dir,
        'echo "bwrap: No permissions to creating new namespace" >&2; exit 1',
      );
      const out = await ctx.out();
      const canary = join(out, 'ran');
      ctx.untouched('script never ran', async () => !(await exists(canary)));
      const sb = ctx.h.newSandbox({ bwrapCandidates: [bwrap] });
      const d = await denied(
        ctx.run('touch', { path: canary }, { sandbox: sb, plan: { writablePaths: [out] } }),
      );
      return blockedIf(d, `SANDBOX_DENIED with diagnosis "${(await sb.probe()).diagnosis.code}"`);
    },
  );

  securityCase(
    {
      id: 'adp-fake-bwrap-path',
      category: 'adapter',
      title: 'a fake bwrap first on PATH and in the working directory',
    },
    async (ctx) => {
      const dir = await ctx.h.dirs.make('skills-mcp-sec-pathbwrap-');
      const marker = join(ctx.h.canaryDir, 'fake-bwrap-used');
      await fakeBwrap(dir, `touch ${marker}; shift $#; exec "$@"`);
      ctx.untouched('fake bwrap never executed', async () => !(await exists(marker)));
      const cwd = process.cwd();
      process.chdir(dir);
      ctx.defer(() => process.chdir(cwd));
      const sb = ctx.h.newSandbox({ env: { ...process.env, PATH: `${dir}:.:${process.env.PATH ?? ''}` } });
      const r = await ctx.run('hello', {}, { sandbox: sb });
      return blockedIf(
        r.exitCode === 0 && !(await exists(marker)),
        `bwrap resolved from a fixed list: ${(await sb.probe()).binary ?? '?'}`,
      );
    },
  );

  securityCase(
    {
      id: 'adp-argv-injection',
      category: 'adapter',
      title: 'shell and bwrap syntax in argv reaches the script verbatim',
    },
    async (ctx) => {
      const x = join(ctx.h.canaryDir, 'argv-injected');
      ctx.untouched('no injected command ran', async () => !(await exists(x)));
      const args = [
        '--bind',
        '/',
        '/',
        '; touch ' + x,
        `$(touch ${x})`,
        `\`touch ${x}\``,
        'a\nb',
        '-',
        '--',
        "'",
        '"',
        '',
        '--args',
        '0',
      ];
      const r = await ctx.probe<{ argv: string[] }>('argv', {}, { args });
      return blockedIf(
        JSON.stringify(r.argv) === JSON.stringify(args),
        `${args.length} arguments arrived unchanged (argv array; no shell)`,
      );
    },
  );

  securityCase(
    {
      id: 'adp-env-injection',
      category: 'adapter',
      title: 'BASH_ENV / ENV in the plan env cannot run code in the shim',
    },
    async (ctx) => {
      const out = await ctx.out();
      const evil = join(out, 'evil.sh');
      const sourced = join(out, 'sourced');
      await writeFile(evil, `touch ${sourced}\n`, { mode: 0o755 });
      ctx.untouched('startup file never sourced', async () => !(await exists(sourced)));
      const r = await ctx.run(
        'hello',
        {},
        { plan: { writablePaths: [out], env: { BASH_ENV: evil, ENV: evil, SHELLOPTS: 'xtrace' } } },
      );
      return blockedIf(
        r.exitCode === 0 && !(await exists(sourced)),
        'no shell reads them: launcher and shim run bash -p --norc with their own env',
      );
    },
  );

  securityCase(
    {
      id: 'adp-profile-traversal',
      category: 'adapter',
      title: 'a skill names a profile outside the profiles folder',
    },
    async (ctx) => {
      const root = await ctx.h.dirs.make();
      const profiles = join(root, 'profiles');
      await mkdir(profiles);
      await copyFile(join(defaultProfilesDir(), 'default.yaml'), join(profiles, 'default.yaml'));
      await copyFile(join(defaultProfilesDir(), 'network.yaml'), join(root, 'evil.yaml'));
      const operator = await loadProfile(profiles, 'default');
      let rejected = 0;
      for (const name of ['../evil', '..%2fevil', '/tmp/evil', 'evil.yaml', 'EVIL', 'default/../../evil']) {
        const e = await loadProfile(profiles, name).catch((err: unknown) => err);
        if (isSkillsError(e) && e.code === 'SANDBOX_PROFILE_INVALID') rejected++;
      }
      return blockedIf(
        rejected === 6 && (await networkBlocked(ctx, operator)),
        'names must match ^[a-z0-9-]+$; the operator default applies',
      );
    },
  );

  securityCase(
    {
      id: 'adp-profile-invalid',
      category: 'adapter',
      title: 'a profile with out-of-range or unknown values',
    },
    async (ctx) => {
      const profiles = await ctx.h.dirs.make();
      const bad = [
        'network: host',
        'memoryMiB: -5',
        'wallTimeMs: 1e12',
        'sandbox: disabled',
        'allowSpawn: "yes"',
        'seccomp: false',
      ];
      const base = await readFile(join(defaultProfilesDir(), 'default.yaml'), 'utf8');
      let rejected = 0;
      for (const [i, line] of bad.entries()) {
        const key = line.split(':')[0]!;
        await writeFile(
          join(profiles, `bad${i}.yaml`),
          `${base.replace(new RegExp(`^${key}:.*$`, 'm'), '')}\n${line}\n`,
        );
        const e = await loadProfile(profiles, `bad${i}`).catch((err: unknown) => err);
        if (isSkillsError(e) && e.code === 'SANDBOX_PROFILE_INVALID') rejected++;
      }
      const operator = await loadProfile(defaultProfilesDir(), 'default');
      return blockedIf(
        rejected === bad.length && (await networkBlocked(ctx, operator)),
        `${rejected}/${bad.length} rejected with path: message lines`,
      );
    },
  );

  securityCase(
    { id: 'adp-profile-looser', category: 'adapter', title: 'a skill asks for a looser profile (network)' },
    async (ctx) => {
      const operator = await loadProfile(defaultProfilesDir(), 'default');
      const requested = await loadProfile(defaultProfilesDir(), 'network');
      const r = resolveProfile(operator, requested);
      return blockedIf(
        r.profile === operator && (await networkBlocked(ctx, r.profile)),
        `refused fields: ${r.looser.join(', ')}; the operator default applies`,
      );
    },
  );

  securityCase(
    {
      id: 'adp-sandbox-off-request',
      category: 'adapter',
      title: 'a plan asks for no sandbox without operator config',
    },
    async (ctx) => {
      const out = await ctx.out();
      const canary = join(out, 'ran');
      ctx.untouched('script never ran', async () => !(await exists(canary)));
      const d = await denied(
        ctx.h.sandbox.run({
          ...ctx.plan('touch', { path: canary }, { plan: { writablePaths: [out] } }),
          sandbox: 'off',
        }),
      );
      return blockedIf(d, 'SANDBOX_DENIED: only the server config can turn the sandbox off');
    },
  );
});
