import { execFileSync } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';

/** Oldest Python that builds and runs skill environments. */
const MIN = [3, 8] as const;

/**
 * Why `path` cannot be the interpreter of `dependencies.python`, or undefined when it can: it must exist, be an
 * executable file, and run as Python 3.8 or newer (asked once, isolated, from `/`, with a 15 s limit).
 */
export function pythonProblem(path: string, env: NodeJS.ProcessEnv): string | undefined {
  try {
    if (!statSync(path).isFile()) return `${JSON.stringify(path)} is not a file`;
  } catch {
    return `${JSON.stringify(path)} does not exist`;
  }
  try {
    accessSync(path, constants.X_OK);
  } catch {
    return `${JSON.stringify(path)} is not executable`;
  }
  const clean = Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('PYTHON')));
  let out: string;
  try {
    out = execFileSync(path, ['-I', '-S', '-c', 'import sys;print("%d.%d" % sys.version_info[:2])'], {
      env: clean,
      cwd: '/',
      timeout: 15_000,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
      maxBuffer: 4096,
    }).trim();
  } catch {
    return `${JSON.stringify(path)} did not run as Python (\`${path} -c "import sys"\` failed)`;
  }
  const [major = 0, minor = 0] = out.split('.').map(Number);
  if (!/^\d+\.\d+$/.test(out)) return `${JSON.stringify(path)} did not report a Python version`;
  if (major < MIN[0] || (major === MIN[0] && minor < MIN[1]))
    return `${JSON.stringify(path)} is Python ${out}; skill environments need Python ${MIN.join('.')} or newer`;
  return undefined;
}
