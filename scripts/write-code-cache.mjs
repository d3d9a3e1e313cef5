// Writes the V8 code cache of the bundled CLI (see load-bundle.mjs): serves the package's own skills over stdio once,
// through initialize, tools/list, prompts/list and a read-only skill call, then ends; at exit the server saves the
// bytecode of every function it compiled on that path. Used by scripts/bundle.mjs; writes nothing to stdout.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
  try {
    await warmUp(entry, skillsDir, tmp);
  } finally {
    rmSync(entry, { force: true });
    rmSync(tmp, { recursive: true, force: true });
  }
}

function warmUp(entry, skillsDir, tmp) {
  const args = [
    entry,
    '--skills',
    skillsDir,
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
