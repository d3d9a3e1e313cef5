import { chownSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait-for.js';
import { isAlive, isLinux, isRoot, newSandbox, plan, processes, tempDirs, text } from './helpers.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

/** Pids of waiting launchers that pre-staged `folder` (a stager bwrap wrapping the launcher's bash). */
const preStagedLaunchers = (folder: string): number[] =>
  processes()
    .filter(
      ({ argv }) =>
        argv[0]?.endsWith('bwrap') && argv.includes('skills-mcp-launcher') && argv.includes(folder),
    )
    .map((p) => p.pid);

// Only a root server stages: it runs scripts as uid 65534, which cannot reach folders below a private home.
describe.skipIf(!isLinux || !isRoot)('bwrap adapter as root: pre-staged launchers', () => {
  it('runs the next call on a launcher that already mounted its folders, and not once a folder was replaced', async () => {
    const sb = newSandbox();
    try {
      const home = await dirs.make('skills-mcp-prestage-', 0o700); // 65534 cannot pass through it
      const skills = join(home, 'skills');
      const runs = join(home, 'runs');
      const writeSkill = (data: string) => {
        mkdirSync(join(skills, 'a'), { recursive: true, mode: 0o755 });
        writeFileSync(join(skills, 'a', 'data.txt'), data, { mode: 0o644 });
      };
      writeSkill('one');
      mkdirSync(runs, { mode: 0o711 });
      const call = async (n: number) => {
        const out = join(runs, `call-${n}`);
        mkdirSync(out, { mode: 0o700 });
        chownSync(out, 65534, 65534);
        const skill = join(skills, 'a');
        const r = await sb.run(
          plan({
            argv: ['bash', '-c', 'cat "$1/data.txt" > "$2/copy" && cat "$1/data.txt"', 'x', skill, out],
            cwd: out,
            readOnlyPaths: [skill],
            writablePaths: [out],
          }),
        );
        return { exit: r.exitCode, stdout: text(r.stdout), copy: readFileSync(join(out, 'copy'), 'utf8') };
      };

      expect(await call(1)).toEqual({ exit: 0, stdout: 'one', copy: 'one' });
      await waitFor(() => preStagedLaunchers(skills).length === 1, 10_000, 'a pre-staged launcher');
      const [first] = preStagedLaunchers(skills);
      expect(await call(2)).toEqual({ exit: 0, stdout: 'one', copy: 'one' });
      expect(isAlive(first!)).toBe(false); // call 2 ran on it

      await waitFor(() => preStagedLaunchers(skills).length === 1, 10_000, 'the next pre-staged launcher');
      // Replace the skills folder: the waiting launcher still has the old one mounted and must not be used.
      renameSync(skills, `${skills}-old`);
      writeSkill('two');
      expect(await call(3)).toEqual({ exit: 0, stdout: 'two', copy: 'two' });
    } finally {
      await sb.dispose();
    }
  });

  it('pre-stages a launcher for the first run from what it will bind, and runs the first call on it', async () => {
    const sb = newSandbox();
    try {
      const home = await dirs.make('skills-mcp-prestage-', 0o700);
      const skill = join(home, 'skills', 'a');
      const runs = join(home, 'runs');
      mkdirSync(skill, { recursive: true, mode: 0o755 });
      writeFileSync(join(skill, 'data.txt'), 'one', { mode: 0o644 });
      mkdirSync(runs, { mode: 0o711 });
      // A folder that is not there yet is left to the run; the others are staged before any run.
      await sb.prestage!({
        interpreters: ['bash'],
        sources: [
          { src: skill, write: false },
          { src: runs, write: true, childOf: true },
          { src: join(home, 'not-there'), write: true, childOf: true },
        ],
      });
      await waitFor(
        () => preStagedLaunchers(join(home, 'skills')).length === 1,
        10_000,
        'a pre-staged launcher',
      );
      const [ready] = preStagedLaunchers(join(home, 'skills'));
      const out = join(runs, 'call-1');
      mkdirSync(out, { mode: 0o700 });
      chownSync(out, 65534, 65534);
      const r = await sb.run(
        plan({
          argv: ['bash', '-c', 'cat "$1/data.txt" > "$2/copy" && cat "$1/data.txt"', 'x', skill, out],
          cwd: out,
          readOnlyPaths: [skill],
          writablePaths: [out],
        }),
      );
      expect({
        exit: r.exitCode,
        stdout: text(r.stdout),
        copy: readFileSync(join(out, 'copy'), 'utf8'),
      }).toEqual({
        exit: 0,
        stdout: 'one',
        copy: 'one',
      });
      expect(isAlive(ready!)).toBe(false); // the first call ran on it
    } finally {
      await sb.dispose();
    }
  });
});
