// Writes the V8 code cache of the bundled CLI (see load-bundle.mjs): serves the package's own skills over stdio,
// through initialize, tools/list, prompts/list and a read-only skill call, then ends; at exit the server saves the
// bytecode of every function it compiled on that path. It serves twice, so that the second start finds the catalog
// cache the first one wrote, as most starts do; a second root holds a skill written just now, which every start
// reads afresh (too new to be cached), so the path that loads a skill is compiled too. Used by scripts/bundle.mjs;
// writes nothing to stdout.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const TIMEOUT_MS = 60_000;

/** Runs the warm-up; rejects if the server does not answer every request as expected. */
export async function writeCodeCache(dist, skillsDir) {
  const tmp = mkdtempSync(join(tmpdir(), 'skills-mcp-code-cache-'));
  const entry = join(dist, 'write-code-cache.mjs');
  writeFileSync(
    entry,
    "import { loadBundle } from './load-bundle.mjs';\nloadBundle({ writeCache: true });\n",
  );
  const fresh = join(tmp, 'fresh-skills');
  mkdirSync(join(fresh, 'fresh-skill'), { recursive: true });
  writeFileSync(
    join(fresh, 'fresh-skill', 'SKILL.md'),
    '---\nname: fresh-skill\ndescription: Written by the build. Use it never.\n---\n\n# Fresh\n',
  );
  try {
    await warmUp(join(dist, 'cli.js'), [skillsDir, fresh], tmp);
    await warmUp(entry, [skillsDir, fresh], tmp);
  } finally {
    rmSync(entry, { force: true });
    rmSync(tmp, { recursive: true, force: true });
  }
}

function warmUp(entry, skillsDirs, tmp) {
  const args = [
    entry,
    ...skillsDirs.flatMap((d) => ['--skills', d]),
    '--no-watch',
    '--log-level',
    'error',
    '--audit',
    join(tmp, 'audit.db'),
  ];
  // Its own state folders and working folder: no user config, audit log or runs folder is touched.
  const env = { PATH: process.env.PATH ?? '', HOME: tmp, XDG_STATE_HOME: tmp, XDG_CACHE_HOME: tmp };
  const child = spawn(process.execPath, args, { cwd: tmp, env, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (d) => (stderr += d));
  const send = (msg) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...msg })}\n`);
  const steps = [
    { method: 'tools/list', params: {} },
    { method: 'prompts/list', params: {} },
    { method: 'tools/call', params: { name: 'markdown-toc', arguments: {} } },
  ];
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail('timed out'), TIMEOUT_MS);
    const fail = (why) => {
      clearTimeout(timer);
      child.kill();
      reject(new Error(`code cache warm-up: ${why}\n${stderr}`));
    };
    let buffer = '';
    let next = 0;
    child.stdout.setEncoding('utf8').on('data', (d) => {
      buffer += d;
      for (let nl = buffer.indexOf('\n'); nl >= 0; nl = buffer.indexOf('\n')) {
        const msg = JSON.parse(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
        if (msg.error !== undefined || msg.result?.isError === true) return fail(JSON.stringify(msg));
        if (next === 0) send({ method: 'notifications/initialized' });
        if (next < steps.length) send({ id: next + 2, ...steps[next] });
        else child.stdin.end();
        next++;
      }
    });
    child.once('error', (err) => fail(err.message));
    child.once('exit', (code) => {
      clearTimeout(timer);
      if (code === 0 && next > steps.length) resolve();
      else fail(`server exited with ${code} after ${next} answers`);
    });
    send({
      id: 1,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'build', version: '1' },
      },
    });
  });
}
