import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { SkillsError } from '../errors.js';
import type { Logger } from '../log.js';
import type { Sandbox } from '../sandbox/create-sandbox.js';
import { profileLimits, type Profile } from '../sandbox/profile-schema.js';
import type { SandboxPlan } from '../sandbox/types.js';
import {
  explainPipFailure,
  unmetRequirement,
  type IndexProbe,
  type PipFailure,
} from './explain-pip-failure.js';
import { copyBundle } from '../skills/copy-bundle.js';
import { checkInstalledSources, checkNodeLock } from './check-node-lock.js';
import {
  fileDependencyPath,
  lockedManifest,
  MAX_TARBALL_BYTES,
  readDeclaration,
  vendoredTarball,
  type EnvSpec,
} from './env-spec.js';
import { envDir, readManifest, removeTree, type EnvManifest } from './env-store.js';
import { credentialsIn, withoutCredentials, type PipSettings } from './pip-config.js';
import { installedNodePackages, installedPythonDists } from './installed-packages.js';
import { sealTree } from './seal-tree.js';
import { treeBytes } from './tree-bytes.js';

type SandboxResult = Awaited<ReturnType<Sandbox['run']>>;

/** How often the size of a build is checked while its installer runs. */
const SIZE_CHECK_MS = 250;

export interface InstallDeps {
  sandbox: Sandbox;
  /** The `install` sandbox profile. */
  profile: Profile;
  pip: PipSettings;
  /** The interpreter pip runs with (see `pythonCommand`). */
  python: string;
  /** The operator's npm registry (normalized): the only place npm fetches from. */
  npmRegistry: string;
  allowSource: boolean;
  envsDir: string;
  log: Logger;
  /** Skill folder (for `file:` Node dependencies written relative to it). */
  skillDir: string;
  /** Largest the folder being built may grow (bytes); an install past it is stopped. */
  maxBytes: number;
  /** Longest the whole install may take (ms); a longer one is stopped. */
  timeoutMs: number;
  /** Owner of a sealed environment: the server when root. */
  owner?: { uid: number; gid: number };
  now?: () => Date;
}

/** The commands an install runs, shown in the approval form and by `skills-mcp deps install`. */
export function installCommands(spec: EnvSpec, allowSource: boolean): string[] {
  const out: string[] = [];
  if (spec.python.length > 0)
    out.push(
      `pip install --target <env>/python ${allowSource ? '' : '--only-binary=:all: '}${spec.python.join(' ')}`,
    );
  const node = Object.entries(spec.node).map(([k, v]) => `${k}@${v}`);
  if (node.length > 0)
    out.push(
      `npm ${spec.nodeLock === undefined ? 'install' : 'ci'}${allowSource ? '' : ' --ignore-scripts'} ${node.join(' ')}`,
    );
  return out;
}

/** A proxy no one listens on (TCP port 1 of the loopback): requests sent through it fail at once. */
const NO_PROXY_THERE = 'http://127.0.0.1:1/';

/** Where vendored packages are copied in the folder npm installs into (removed once installed). */
const VENDOR = '.skills-mcp-vendor';

const vendorChanged = (name: string) =>
  new SkillsError(
    'STALE_BINDING',
    `the vendored package ${name} changed after the environment was approved`,
    {
      hint: 'Nothing was installed. Call the tool again so the new environment can be reviewed.',
    },
  );

/**
 * Node dependencies for the generated package.json: each `file:` one is first copied from the skill into `work`
 * (checked to hash to what the environment's id covers) and named by that copy, so npm installs the copy (packed
 * and unpacked, `--install-links`; a tarball as rebuilt by `readTarball`) and nothing in the environment points back
 * into a live skill folder.
 */
async function vendoredDependencies(
  spec: EnvSpec,
  skillDir: string,
  work: string,
): Promise<Record<string, string>> {
  const deps: Record<string, string> = {};
  let n = 0;
  for (const [name, range] of Object.entries(spec.node)) {
    if (!range.startsWith('file:')) {
      deps[name] = range;
      continue;
    }
    const want = spec.nodeFiles?.[range];
    if (want === undefined) throw vendorChanged(name);
    const real = fileDependencyPath(skillDir, range.slice('file:'.length));
    mkdirSync(join(work, VENDOR), { recursive: true, mode: 0o755 });
    const copy = join(VENDOR, String(n++));
    if (statSync(real).isDirectory()) {
      await copyBundle(real, want, join(work, `${copy}.tmp`), join(work, copy)).catch((e: unknown) => {
        throw e instanceof SkillsError && e.code === 'STALE_BINDING' ? vendorChanged(name) : e;
      });
      deps[name] = `file:${copy}`;
    } else {
      if (statSync(real).size > MAX_TARBALL_BYTES) throw vendorChanged(name);
      const data = readFileSync(real);
      if (createHash('sha256').update(data).digest('hex') !== want) throw vendorChanged(name);
      // npm gets the archive rebuilt from what the spec checked, never the original: its tar reader and ours
      // could read one unusual archive differently (and install a manifest that was never checked).
      const repacked = vendoredTarball(data, range.slice('file:'.length)).repacked();
      writeFileSync(join(work, `${copy}.tgz`), repacked, { mode: 0o444, flag: 'wx' });
      deps[name] = `file:${copy}.tgz`;
    }
  }
  if (n > 0) chmodSync(join(work, VENDOR), 0o555);
  return deps;
}

/**
 * The skill's package.json (its checked dependency fields only, see `lockedManifest`) or lock file for `npm ci`,
 * read inside the skill; the lock must be the approved one.
 */
function lockedFile(skillDir: string, f: string, spec: EnvSpec, registry: string): Buffer {
  const data = readDeclaration(skillDir, f, 'bytes');
  if (data === undefined) throw new SkillsError('ENV_SPEC_INVALID', `${f} is missing`);
  if (f === 'package.json') return Buffer.from(lockedManifest(data.toString('utf8')));
  if (f === 'package-lock.json') {
    if (createHash('sha256').update(data).digest('hex') !== spec.nodeLock)
      throw new SkillsError('STALE_BINDING', 'package-lock.json changed after the environment was approved', {
        hint: 'Nothing was installed. Call the tool again so the new environment can be reviewed.',
      });
    checkNodeLock(data.toString('utf8'), registry);
  }
  return data;
}

/**
 * Builds environment `id` for `spec` inside the sandbox (the `install` profile: network, writable only the new
 * folder), then seals it and renames it into place. Binary wheels only and npm scripts ignored unless `allowSource`.
 * A crash or failure leaves at most a `skills-mcp-out-*` folder that is never used (`skills-mcp deps prune` removes
 * it). An install that grows the folder past `maxBytes` (checked while it runs, and once more after) or runs past
 * `timeoutMs` is stopped and removed. Returns the manifest; an environment someone else finished meanwhile is
 * reused.
 */
export async function installEnv(id: string, spec: EnvSpec, d: InstallDeps): Promise<EnvManifest> {
  const existing = readManifest(d.envsDir, id);
  if (existing !== undefined) return existing;
  mkdirSync(d.envsDir, { recursive: true, mode: 0o755 });
  const build = await d.sandbox.createOutputDir(d.envsDir);
  const work = join(build, 'files');
  const credentials = credentialsIn(d.pip.env);
  const tailOf = (b: Buffer) => withoutCredentials(b.toString('utf8'), credentials).slice(-1500);
  const deadline = Date.now() + d.timeoutMs;
  const mib = Math.round(d.maxBytes / 1024 / 1024);
  try {
    const limits = profileLimits(d.profile);
    const base: Omit<SandboxPlan, 'argv' | 'readOnlyPaths'> = {
      cwd: build,
      env: { HOME: '/tmp', TMPDIR: '/tmp', ...d.pip.env },
      writablePaths: [build],
      network: d.profile.network,
      limits,
      profile: d.profile.name,
      sandbox: 'required',
    };
    const run = async (
      what: string,
      plan: SandboxPlan,
      explain?: (r: SandboxResult) => Promise<PipFailure>,
    ): Promise<SandboxResult> => {
      d.log.info({ env: id.slice(0, 12), what }, 'environment install step');
      const tooBig = new AbortController();
      const check = () => {
        if (treeBytes(build, d.maxBytes) > d.maxBytes) tooBig.abort();
      };
      const timer = setInterval(check, SIZE_CHECK_MS);
      const left = Math.max(100, Math.min(deadline - Date.now(), 3_600_000));
      let r: SandboxResult;
      try {
        r = await d.sandbox.run(
          { ...plan, limits: { ...plan.limits, wallTimeMs: left } },
          { signal: tooBig.signal },
        );
      } finally {
        clearInterval(timer);
      }
      if (!tooBig.signal.aborted) check();
      if (tooBig.signal.aborted)
        throw new SkillsError(
          'ENV_INSTALL_FAILED',
          `installing the skill environment failed (${what}): it grew past ${mib} MiB`,
          {
            hint: `Nothing of it was kept. Raise \`dependencies.max_size_mib\` in skills-mcp.yaml if the packages really need more room.`,
          },
        );
      if (r.timedOut)
        throw new SkillsError(
          'ENV_INSTALL_FAILED',
          `installing the skill environment failed (${what}): it ran past ${Math.round(d.timeoutMs / 1000)} s`,
          {
            hint: `Nothing of it was kept. Raise \`dependencies.timeout_seconds\` in skills-mcp.yaml if the install really needs longer.`,
          },
        );
      if (r.exitCode !== 0) {
        const why = explain === undefined ? {} : await explain(r);
        throw new SkillsError(
          'ENV_INSTALL_FAILED',
          `installing the skill environment failed (${what}, exit ${r.exitCode ?? r.signal})${why.cause === undefined ? '' : `: ${withoutCredentials(why.cause, credentials)}`}`,
          {
            hint: `${why.advice === undefined ? '' : `${withoutCredentials(why.advice, credentials)}\n`}Installer output (end):\n${tailOf(r.stderr)}`,
          },
        );
      }
      return r;
    };
    /** A failed pip install explained: for a requirement it could not satisfy, one verbose look at the index. */
    const explainPip = async (r: SandboxResult) => {
      const unmet = unmetRequirement(r.stderr.toString());
      let probe: IndexProbe | undefined;
      if (unmet !== undefined && Date.now() < deadline - 1000) {
        const p = await d.sandbox
          .run({
            ...base,
            argv: [d.python, '-m', 'pip', '-vv', 'index', 'versions', '--pre', unmet.name],
            readOnlyPaths: d.pip.mounts,
            limits: { ...base.limits, wallTimeMs: Math.min(deadline - Date.now(), 120_000) },
          })
          .catch(() => undefined);
        if (p !== undefined && !p.timedOut)
          probe = { exitCode: p.exitCode, stdout: p.stdout.toString(), stderr: p.stderr.toString() };
      }
      return explainPipFailure(r.stderr.toString(), r.stdout.toString(), probe, {
        allowSource: d.allowSource,
        sources: d.pip.sources,
      });
    };
    if (spec.python.length > 0) {
      const req = join(work, 'requirements.txt');
      writeFileSync(req, `${spec.python.join('\n')}\n`, { mode: 0o644 });
      await run(
        'pip',
        {
          ...base,
          argv: [
            d.python,
            '-m',
            'pip',
            'install',
            '--no-input',
            '--disable-pip-version-check',
            '--no-cache-dir',
            '--no-warn-script-location',
            '--target',
            join(build, 'python'),
            ...(d.allowSource ? [] : ['--only-binary=:all:']),
            '-r',
            req,
          ],
          readOnlyPaths: d.pip.mounts,
        },
        explainPip,
      );
    }
    if (Object.keys(spec.node).length > 0) {
      // With a lock file: the skill's lock verbatim and its package.json's dependency fields (`npm ci`). Else a
      // package.json of the spec.
      const ci = spec.nodeLock !== undefined;
      const deps = ci ? {} : await vendoredDependencies(spec, d.skillDir, work);
      const files: [string, string | Buffer][] = ci
        ? ['package.json', 'package-lock.json'].map((f) => [
            f,
            lockedFile(d.skillDir, f, spec, d.npmRegistry),
          ])
        : [['package.json', JSON.stringify({ name: 'skill-env', private: true, dependencies: deps })]];
      for (const [f, data] of files) writeFileSync(join(work, f), data, { mode: 0o644 });
      await run('npm', {
        ...base,
        env: {
          ...base.env,
          npm_config_cache: '/tmp/npm-cache',
          npm_config_update_notifier: 'false',
          npm_config_registry: d.npmRegistry,
          // Only the environment's settings count: no user or global npmrc can name another registry.
          npm_config_userconfig: '/dev/null',
          npm_config_globalconfig: '/tmp/no-global-npmrc',
          // npm follows an npm-shrinkwrap.json shipped inside a registry package, whose entries may name any server:
          // every host but the registry's goes through a proxy that is never there, so npm cannot reach it.
          npm_config_proxy: NO_PROXY_THERE,
          npm_config_https_proxy: NO_PROXY_THERE,
          npm_config_noproxy: new URL(d.npmRegistry).hostname,
          // Its refusals are retried: with short pauses (npm's default waits up to a minute between tries).
          npm_config_fetch_retry_mintimeout: '1000',
          npm_config_fetch_retry_maxtimeout: '4000',
        },
        cwd: work,
        argv: [
          'npm',
          ci ? 'ci' : 'install',
          '--no-audit',
          '--no-fund',
          '--omit=dev',
          '--no-save',
          '--no-package-lock',
          '--install-links',
          ...(d.allowSource ? [] : ['--ignore-scripts']),
        ],
        readOnlyPaths: [],
      });
      const record = join(work, 'node_modules', '.package-lock.json');
      const recorded = lstatSync(record, { throwIfNoEntry: false });
      checkInstalledSources(
        recorded?.isFile() === true && recorded.size <= MAX_TARBALL_BYTES
          ? readFileSync(record, 'utf8')
          : undefined,
        d.npmRegistry,
        VENDOR,
      );
      if (existsSync(join(work, VENDOR))) removeTree(join(work, VENDOR));
      renameSync(work, join(build, 'node'));
    } else {
      removeTree(work);
    }
    const manifest: EnvManifest = {
      id,
      spec,
      installed: [
        ...installedPythonDists(join(build, 'python')),
        ...installedNodePackages(join(build, 'node')),
      ],
      built: (d.now ?? (() => new Date()))().toISOString(),
    };
    for (const e of readdirSync(build)) if (!['python', 'node'].includes(e)) removeTree(join(build, e));
    writeFileSync(join(build, 'env.json'), JSON.stringify(manifest, null, 2), { mode: 0o444 });
    sealTree(build, d.owner);
    try {
      renameSync(build, envDir(d.envsDir, id));
    } catch (e) {
      const done = readManifest(d.envsDir, id);
      if (done === undefined) throw e;
      removeTree(build);
      return done;
    }
    return manifest;
  } catch (e) {
    if (existsSync(build)) removeTree(build);
    throw e;
  }
}
