import { execFile } from 'node:child_process';
import { isAbsolute } from 'node:path';

/**
 * The folders `python` imports from, isolated (`-I`: no user site, no PYTHON* variables), as a sandboxed run of it
 * sees them; empty when it cannot be asked. Used to name the version of an installed package, never to run one.
 */
export function pythonPath(python: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const clean = Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('PYTHON')));
  return new Promise((resolve) => {
    execFile(
      python,
      ['-I', '-c', 'import json,sys;print(json.dumps(sys.path))'],
      { env: clean, cwd: '/', timeout: 15_000, maxBuffer: 64 * 1024 },
      (err, stdout) => {
        if (err !== null) return resolve([]);
        try {
          const got = JSON.parse(stdout) as unknown;
          resolve(
            Array.isArray(got)
              ? got.filter((p): p is string => typeof p === 'string' && isAbsolute(p)).slice(0, 100)
              : [],
          );
        } catch {
          resolve([]);
        }
      },
    );
  });
}
