import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { lstat, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Sandbox } from '../../src/sandbox/create-sandbox.js';
import { isRoot, newSandbox, plan, tempDirs, text } from './helpers.js';

const dirs = tempDirs();
let sb: Sandbox;
let skill: string;

beforeAll(async () => {
  sb = newSandbox();
  skill = await dirs.make('skills-mcp-skill-');
  await mkdir(join(skill, 'scripts'));
  await writeFile(join(skill, 'data.txt'), 'skill-data\n');
  await writeFile(
    join(skill, 'scripts', 'main.py'),
    [
      'import json, multiprocessing, os, subprocess, sys, threading',
      'def sq(x): return x * x',
      'if __name__ == "__main__":',
      '    got = []',
      '    t = threading.Thread(target=lambda: got.append("thread")); t.start(); t.join()',
      '    with multiprocessing.Pool(2) as p: got.append(sum(p.map(sq, [1, 2, 3])))',
      '    got.append(subprocess.run(["echo", "sub"], capture_output=True, text=True).stdout.strip())',
      '    got.append(open(os.path.join(os.path.dirname(__file__), "..", "data.txt")).read().strip())',
      '    print(json.dumps(got))',
    ].join('\n'),
  );
  await writeFile(
    join(skill, 'scripts', 'main.mjs'),
    'import { readFileSync } from "node:fs";\nconsole.log(JSON.stringify({ argv: process.argv.slice(2), data: readFileSync(process.env.SKILL_DIR + "/data.txt", "utf8").trim() }));\n',
  );
  await writeFile(join(skill, 'scripts', 'main.sh'), 'echo "bash:$1:$(cat "$SKILL_DIR/data.txt")"\n');
});
afterAll(async () => {
  await sb.dispose();
  await dirs.cleanup();
});

describe('bwrap adapter: real scripts', () => {
  it('runs python3 from the server PATH with the stdlib, threads, multiprocessing and subprocess', async () => {
    const out = await sb.createOutputDir(await dirs.make('skills-mcp-runs-'));
    const r = await sb.run(
      plan({
        argv: ['python3', join(skill, 'scripts', 'main.py')],
        cwd: out,
        readOnlyPaths: [skill],
        writablePaths: [out],
      }),
    );
    expect(text(r.stderr)).toBe('');
    expect(JSON.parse(text(r.stdout))).toEqual(['thread', 14, 'sub', 'skill-data']);
    expect(r.evidence).toMatchObject({
      adapter: 'bwrap',
      active: true,
      effective: 'enforced',
      seccomp: true,
    });
  });

  it('runs node and bash scripts with argv and env passed verbatim', async () => {
    const env = { SKILL_DIR: skill };
    const args = ['--bind', '/', '/', '$(id)', 'a\nb', ';', '-rf'];
    const node = await sb.run(
      plan({ argv: ['node', join(skill, 'scripts', 'main.mjs'), ...args], env, readOnlyPaths: [skill] }),
    );
    expect(JSON.parse(text(node.stdout))).toEqual({ argv: args, data: 'skill-data' });
    const bash = await sb.run(
      plan({ argv: ['bash', join(skill, 'scripts', 'main.sh'), 'x y'], env, readOnlyPaths: [skill] }),
    );
    expect(text(bash.stdout)).toBe('bash:x y:skill-data\n');
  });

  it('feeds stdin and runs in the requested working directory', async () => {
    const out = await sb.createOutputDir(await dirs.make('skills-mcp-runs-'));
    const r = await sb.run(
      plan({
        argv: ['python3', '-c', 'import os,sys; print(os.getcwd(), sys.stdin.read())'],
        cwd: out,
        writablePaths: [out],
        stdin: Buffer.from('{"n":1}'),
      }),
    );
    expect(text(r.stdout)).toBe(`${out} {"n":1}\n`);
  });

  it('sees the skill, output and workspace folders at their host paths, writable only where granted', async () => {
    const out = await sb.createOutputDir(await dirs.make('skills-mcp-runs-'));
    const ws = await dirs.make('skills-mcp-ws-');
    await writeFile(join(ws, 'readme.md'), 'workspace');
    const script = [
      'import os, sys',
      'skill, out, ws = sys.argv[1:4]',
      'print(open(os.path.join(ws, "readme.md")).read())',
      'open(os.path.join(out, "result.txt"), "w").write("written")',
      'for d in (skill, ws):',
      '    try:',
      '        open(os.path.join(d, "intruder"), "w").write("x"); print("WROTE", d)',
      '    except OSError as e:',
      '        print("refused", e.errno)',
    ].join('\n');
    const r = await sb.run(
      plan({
        argv: ['python3', '-c', script, skill, out, ws],
        cwd: out,
        readOnlyPaths: [skill],
        writablePaths: [out],
        workspace: { path: ws, write: false },
      }),
    );
    expect(text(r.stdout)).toBe('workspace\nrefused 30\nrefused 30\n'); // EROFS
    expect(await readFile(join(out, 'result.txt'), 'utf8')).toBe('written');
    await expect(stat(join(ws, 'intruder'))).rejects.toThrow();
    await expect(stat(join(skill, 'intruder'))).rejects.toThrow();
  });

  it('runs a workspace-writing script on a private copy and applies only its ordinary file changes', async () => {
    const ws = await dirs.make('skills-mcp-ws-');
    await mkdir(join(ws, '.git', 'hooks'), { recursive: true });
    await writeFile(join(ws, '.git', 'config'), '[core]\n');
    await writeFile(join(ws, '.bashrc'), '# rc\n');
    await writeFile(join(ws, 'gone.txt'), 'bye\n');
    const script = [
      'import os, sys',
      'ws = sys.argv[1]',
      'for rel in ("src.txt", ".git/hooks/pre-commit", ".git/config", ".bashrc"):',
      '    try:',
      '        open(ws + "/" + rel, "a").write("x"); print("ok", rel)',
      '    except OSError as e:',
      '        print("ro", rel)',
      'os.unlink(ws + "/gone.txt")',
      'os.symlink("/etc/passwd", ws + "/link")',
    ].join('\n');
    const r = await sb.run(
      plan({ argv: ['python3', '-c', script, ws], workspace: { path: ws, write: true } }),
    );
    expect(text(r.stdout).split('\n')).toEqual([
      'ok src.txt',
      'ro .git/hooks/pre-commit',
      'ro .git/config',
      'ok .bashrc',
      '',
    ]);
    expect(r.workspace).toEqual({
      written: ['src.txt'],
      digests: new Map([['src.txt', { sha256: createHash('sha256').update('x').digest('hex'), bytes: 1 }]]),
      deleted: ['gone.txt'],
      refused: [
        { path: '.bashrc', reason: '.bashrc is read and acted on by host tools' },
        { path: 'link', reason: 'not a regular file' },
      ],
      applied: true,
    });
    expect(await readFile(join(ws, 'src.txt'), 'utf8')).toBe('x');
    expect(await readFile(join(ws, '.bashrc'), 'utf8')).toBe('# rc\n');
    expect(await readFile(join(ws, '.git', 'config'), 'utf8')).toBe('[core]\n');
    const absent = (rel: string) =>
      lstat(join(ws, rel)).then(
        () => false,
        () => true,
      );
    expect(await absent('gone.txt')).toBe(true);
    expect(await absent('link')).toBe(true);
  });

  it('runs an interpreter installed outside /usr, even below a folder only the server can enter', async () => {
    const home = await dirs.make('skills-mcp-home-', 0o700);
    const venv = join(home, 'venv');
    execFileSync('/usr/bin/python3', ['-m', 'venv', '--copies', '--without-pip', venv]);
    const own = newSandbox({ env: { PATH: join(venv, 'bin') } });
    try {
      const r = await own.run(
        plan({ argv: ['python3', '-c', 'import sys, os; print(sys.executable, sys.prefix, os.getuid())'] }),
      );
      const uid = isRoot ? 65534 : process.getuid!();
      expect(text(r.stdout)).toBe(`${venv}/bin/python3 ${venv} ${uid}\n`);
    } finally {
      await own.dispose();
    }
  });

  it('runs two calls at once', async () => {
    const rs = await Promise.all(
      [1, 2].map((n) =>
        sb.run(plan({ argv: ['python3', '-c', `import time; time.sleep(0.3); print(${n})`] })),
      ),
    );
    expect(rs.map((r) => text(r.stdout))).toEqual(['1\n', '2\n']);
  });

  it('creates output folders the sandbox user owns, with files/ inside', async () => {
    const out = await sb.createOutputDir(await dirs.make('skills-mcp-runs-'));
    const st = await stat(out);
    expect(st.mode & 0o777).toBe(0o700);
    expect(st.uid).toBe(isRoot ? 65534 : process.getuid!());
    expect((await stat(join(out, 'files'))).isDirectory()).toBe(true);
  });
});

describe('bwrap adapter: strict limits', () => {
  it('forbids creating processes but keeps threads working when allowSpawn is false', async () => {
    const limits = { allowSpawn: false };
    const script =
      'import subprocess, threading\nt = threading.Thread(target=print, args=("thread",)); t.start(); t.join()\ntry:\n    subprocess.run(["true"]); print("spawned")\nexcept PermissionError:\n    print("no spawn")';
    const r = await sb.run(plan({ argv: ['python3', '-c', script], limits }));
    expect(text(r.stdout)).toBe('thread\nno spawn\n');
    const node = await sb.run(plan({ argv: ['node', '-e', 'console.log("node ok")'], limits }));
    expect(text(node.stdout)).toBe('node ok\n');
  });
});
