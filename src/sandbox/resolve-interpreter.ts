import { execFile } from 'node:child_process';
import { constants } from 'node:fs';
import { access, open, realpath, stat } from 'node:fs/promises';
import { basename, dirname, extname, isAbsolute, join } from 'node:path';
import { SkillsError } from '../errors.js';

/**
 * How interpreters are found (documented choice):
 *
 * - `python3`/`node` are looked up on the server's PATH (absolute entries only), then the host interpreter
 *   is asked for its real executable and install prefix (`sys.base_prefix`, `process.execPath`). This sees
 *   through pyenv/asdf/volta shims, which are shell scripts that cannot run inside the sandbox, and yields
 *   the install prefix (e.g. `/root/.pyenv/versions/3.11.7`) that must be mounted read-only inside.
 *   Asking runs the operator's own interpreter once, isolated (`python3 -I -S`), with cwd `/` (so no
 *   `.python-version` in a skill folder steers it), and the answer is cached per resolver.
 * - `bash`/`sh` are always `/bin/bash` and `/bin/sh` from the host's `/usr`.
 * - An absolute argv[0] is used as is (after realpath); its prefix is mounted when outside `/usr`. A virtual
 *   environment's python (`dependencies.python: /opt/venv/bin/python`) runs by its path inside the mounted venv,
 *   with the base interpreter's prefix mounted too, so the venv's packages are the ones it imports.
 * - A prefix under a folder the sandbox user cannot traverse (pyenv under `/root`, mode 700, while the
 *   sandbox runs as uid 65534) is still usable: the bwrap adapter stages such paths through a root-owned
 *   mount namespace (see `stage-mounts.ts`), so the interpreter the operator chose is the one that runs.
 *   The files themselves must be world-readable (pyenv, nvm and conda installs are).
 */
export interface ResolvedInterpreter {
  /** Absolute real path executed inside the sandbox. */
  command: string;
  /** Host folders outside `/usr` to mount read-only at the same path so it runs. */
  mounts: string[];
  /** First entry of PATH inside the sandbox, so child processes find the same interpreter. */
  binDir: string;
  /** Where it was found (the PATH entry, e.g. a pyenv shim), for `doctor`. */
  source: string;
}

/** Runs a host command and returns its stdout (injectable for tests of the PATH logic). */
export type HostQuery = (file: string, args: string[], env: NodeJS.ProcessEnv) => Promise<string>;

export const queryHost: HostQuery = (file, args, env) =>
  new Promise<string>((resolve, reject) => {
    execFile(file, args, { env, cwd: '/', timeout: 15_000, maxBuffer: 64 * 1024 }, (err, stdout) => {
      if (err === null) resolve(stdout);
      else reject(new SkillsError('RUNNER_UNSUPPORTED', `${file} could not be queried`, { cause: err }));
    });
  });

const SCRIPT_INTERPRETERS: Record<string, string> = {
  '.py': 'python3',
  '.js': 'node',
  '.mjs': 'node',
  '.cjs': 'node',
  '.sh': 'bash',
  '.bash': 'bash',
};

/** The interpreter name for a script by extension (see the table above), or undefined when it is not runnable. */
export function interpreterForScript(scriptPath: string): string | undefined {
  return SCRIPT_INTERPRETERS[extname(scriptPath).toLowerCase()];
}

const SYSTEM_PREFIXES = ['/usr/'];
const isSystem = (p: string) => SYSTEM_PREFIXES.some((s) => p.startsWith(s)) || p === '/usr';

/** The install prefix of a binary: `<prefix>/bin/x` → `<prefix>`, otherwise its folder. */
export function installPrefix(realBinary: string): string {
  const dir = dirname(realBinary);
  return basename(dir) === 'bin' ? dirname(dir) : dir;
}

/** First executable named `name` on an absolute-entries-only PATH. */
export async function findOnPath(name: string, pathValue: string | undefined): Promise<string | undefined> {
  for (const dir of (pathValue ?? '').split(':')) {
    if (!isAbsolute(dir)) continue; // '' and relative entries would mean "the current folder"
    const candidate = join(dir, name);
    try {
      if ((await stat(candidate)).isFile()) {
        await access(candidate, constants.X_OK);
        return candidate;
      }
    } catch {
      // not here
    }
  }
  return undefined;
}

const isFile = (p: string) =>
  stat(p).then(
    (s) => s.isFile(),
    () => false,
  );

async function isElf(file: string): Promise<boolean> {
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(4);
    await fh.read(buf, 0, 4, 0);
    return buf.equals(Buffer.from([0x7f, 0x45, 0x4c, 0x46]));
  } finally {
    await fh.close();
  }
}

function hostEnv(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const out: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(env)) {
    if (k === 'NODE_OPTIONS' || k.startsWith('PYTHON') || k.startsWith('LD_')) continue;
    out[k] = v;
  }
  return out;
}

function fromBinary(real: string, extra: string[], source: string): ResolvedInterpreter {
  const mounts = [...new Set([installPrefix(real), ...extra])].filter((m) => !isSystem(m));
  return { command: real, mounts, binDir: dirname(real), source };
}

export interface InterpreterResolver {
  resolve(nameOrPath: string): Promise<ResolvedInterpreter>;
}

/** Resolver with a per-instance cache. `env` is the server's environment (PATH, PYENV_VERSION, …). */
export function createInterpreterResolver(
  env: NodeJS.ProcessEnv,
  query: HostQuery = queryHost,
): InterpreterResolver {
  const cache = new Map<string, Promise<ResolvedInterpreter>>();

  async function resolveUncached(name: string): Promise<ResolvedInterpreter> {
    if (name === 'bash' || name === 'sh') {
      const real = await realpath(`/bin/${name}`);
      return fromBinary(real, [], `/bin/${name}`);
    }
    const found = isAbsolute(name) ? name : await findOnPath(name, env.PATH);
    if (found === undefined) {
      throw new SkillsError('RUNNER_UNSUPPORTED', `interpreter ${name} not found on PATH`, {
        hint: `Install ${name}, or put it on the server's PATH.`,
      });
    }
    const real = await realpath(found);
    const base = basename(name);
    if (/^python[0-9.]*$/.test(base)) {
      const code =
        'import os,sys;print(os.path.realpath(sys.executable));print(sys.base_prefix);print(sys.prefix);print(sys.executable)';
      const [exe = '', basePrefix = '', prefix = '', named = ''] = (
        await query(found, ['-I', '-S', '-c', code], hostEnv(env))
      )
        .trim()
        .split('\n');
      if (!isAbsolute(exe))
        throw new SkillsError('RUNNER_UNSUPPORTED', `${found} did not report its executable`);
      // A virtual environment's python is its base interpreter reached through the venv's own path (Python finds
      // `<venv>/pyvenv.cfg` from it): it runs by that path, with the venv mounted, so the venv's packages are seen.
      const venv = isAbsolute(named) ? dirname(dirname(named)) : undefined;
      if (venv !== undefined && venv !== '/' && (await isFile(join(venv, 'pyvenv.cfg')))) {
        const r = fromBinary(exe, [basePrefix, prefix, venv].filter(isAbsolute), found);
        return { ...r, command: named, binDir: dirname(named) };
      }
      return fromBinary(exe, [basePrefix, prefix].filter(isAbsolute), found);
    }
    if (/^(node|nodejs)$/.test(base) && !(await isElf(real).catch(() => false))) {
      const exe = (await query(found, ['-p', 'process.execPath'], hostEnv(env))).trim();
      if (!isAbsolute(exe))
        throw new SkillsError('RUNNER_UNSUPPORTED', `${found} did not report its executable`);
      return fromBinary(await realpath(exe), [], found);
    }
    return fromBinary(real, [], found);
  }

  return {
    resolve(nameOrPath) {
      let p = cache.get(nameOrPath);
      if (p === undefined) {
        p = resolveUncached(nameOrPath);
        cache.set(nameOrPath, p);
        p.catch(() => cache.delete(nameOrPath));
      }
      return p;
    },
  };
}
