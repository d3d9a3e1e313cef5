import { execFile } from 'node:child_process';
import { SkillsError } from '../errors.js';

/** What an environment's identity depends on besides its spec. */
export interface HostRuntime {
  /** e.g. `cpython-3.11.7 linux-x86_64`, or undefined when no python3 is on PATH. */
  python?: string;
  /** e.g. `node-abi115 linux-x64`, or undefined when no node is on PATH. */
  node?: string;
}

const run = (file: string, args: string[], env: NodeJS.ProcessEnv) =>
  new Promise<string>((resolve, reject) => {
    execFile(file, args, { env, cwd: '/', timeout: 15_000, maxBuffer: 64 * 1024 }, (err, stdout) =>
      err === null ? resolve(stdout.trim()) : reject(new Error(`${file} failed`, { cause: err })),
    );
  });

const PY =
  'import sys,sysconfig;print("%s-%d.%d.%d %s" % ((sys.implementation.name,) + tuple(sys.version_info[:3]) + (sysconfig.get_platform(),)))';

/**
 * Asks the operator's interpreters (`python`, default python3, and node from the server's PATH, run isolated from
 * `/`) for their version and platform. An environment built for one Python or Node is never used with another.
 */
export async function hostRuntime(
  env: NodeJS.ProcessEnv,
  need: { python: boolean; node: boolean },
  python = 'python3',
): Promise<HostRuntime> {
  const clean = Object.fromEntries(
    Object.entries(env).filter(([k]) => !k.startsWith('PYTHON') && k !== 'NODE_OPTIONS'),
  );
  const out: HostRuntime = {};
  try {
    if (need.python) out.python = await run(python, ['-I', '-S', '-c', PY], clean);
    if (need.node)
      out.node = await run(
        'node',
        ['-p', '"node-abi" + process.versions.modules + " " + process.platform + "-" + process.arch'],
        clean,
      );
  } catch (cause) {
    throw new SkillsError('RUNNER_UNSUPPORTED', 'the interpreter for the skill environment was not found', {
      hint: 'Put python3 (and node, for Node skills) on the server PATH, or set `dependencies.python` in skills-mcp.yaml.',
      cause,
    });
  }
  return out;
}
