// Skill environment benchmark ("npm run bench envs").
//
// Two skills run the same script through the real server over stdio (policy allow, real sandbox, audit): one declares
// a package in requirements.txt (its environment is mounted read-only and put on PYTHONPATH), the other declares
// nothing. The first call of the first skill builds its environment (in the install sandbox, from a wheel this bench
// writes itself, pip offline with --no-index --find-links): that time is reported. Then calls alternate between the
// two in blocks; target: the median of the skill with a built environment ≤ 5 ms above the one without.
// Writes bench/results/envs.json. Needs a built dist/. BENCH_RUNS (default 40).
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { performance } from 'node:perf_hooks';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport, getDefaultEnvironment } from '@modelcontextprotocol/client/stdio';
import { removeTree } from '../dist/envs/env-store.js';

const here = dirname(fileURLToPath(import.meta.url));
const repo = resolve(here, '..');
const RUNS = Number(process.env.BENCH_RUNS ?? 40);
const WARMUP = 5;
const BLOCK = 5;
const SETTLE_MS = 100;
const SCRIPT =
  'import json\ntry:\n    import tinypkg\n    v = tinypkg.VALUE\nexcept ImportError:\n    v = None\nprint(json.dumps({"v": v}))\n';
const WHEEL = `
import base64, hashlib, sys, zipfile
out = sys.argv[1]
files = {"tinypkg/__init__.py": 'VALUE = "tiny"\\n', "tinypkg-1.0.dist-info/METADATA": "Metadata-Version: 2.1\\nName: tinypkg\\nVersion: 1.0\\n",
         "tinypkg-1.0.dist-info/WHEEL": "Wheel-Version: 1.0\\nGenerator: bench\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}
rec = []
with zipfile.ZipFile(out + "/tinypkg-1.0-py3-none-any.whl", "w") as z:
    for n, t in files.items():
        d = t.encode(); z.writestr(n, d)
        rec.append(f"{n},sha256={base64.urlsafe_b64encode(hashlib.sha256(d).digest()).rstrip(b'=').decode()},{len(d)}")
    rec.append("tinypkg-1.0.dist-info/RECORD,,"); z.writestr("tinypkg-1.0.dist-info/RECORD", "\\n".join(rec) + "\\n")
`;

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const p95 = (xs) => [...xs].sort((a, b) => a - b)[Math.ceil(xs.length * 0.95) - 1];

const tmp = mkdtempSync(join(os.tmpdir(), 'skills-mcp-bench-envs-'));
try {
  const skills = join(tmp, 'skills');
  for (const name of ['with-env', 'no-env']) {
    mkdirSync(join(skills, name, 'scripts'), { recursive: true });
    writeFileSync(
      join(skills, name, 'SKILL.md'),
      `---\nname: ${name}\ndescription: Bench skill ${name}.\n---\n\nx\n`,
    );
    writeFileSync(join(skills, name, 'scripts', 'main.py'), SCRIPT);
  }
  writeFileSync(join(skills, 'with-env', 'requirements.txt'), 'tinypkg==1.0\n');
  const wheels = join(tmp, 'wheels');
  mkdirSync(wheels);
  execFileSync('python3', ['-c', WHEEL, wheels]);
  const config = join(tmp, 'skills-mcp.yaml');
  writeFileSync(config, 'approval:\n  mode: allow\n  fallback: rules-only\n');
  mkdirSync(join(tmp, 'state'));
  const client = new Client({ name: 'bench', version: '1' }, { capabilities: {} });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [
      join(repo, 'dist', 'cli.js'),
      '--skills',
      skills,
      '--config',
      config,
      '--audit',
      join(tmp, 'state', 'audit.db'),
      '--no-watch',
      '--log-level',
      'warn',
    ],
    env: {
      ...getDefaultEnvironment(),
      PIP_CONFIG_FILE: '/dev/null',
      PIP_NO_INDEX: '1',
      PIP_FIND_LINKS: wheels,
    },
    stderr: 'inherit',
  });
  await client.connect(transport);
  const call = async (skill, expect) => {
    await sleep(SETTLE_MS);
    const t0 = performance.now();
    const r = await client.callTool({
      name: 'run_skill_script',
      arguments: { skill, script: 'scripts/main.py' },
    });
    const ms = performance.now() - t0;
    if (r.isError || r.structuredContent?.v !== expect)
      throw new Error(`${skill} failed: ${r.content[0]?.text}`);
    return ms;
  };
  const firstCall = await call('with-env', 'tiny');
  for (let i = 0; i < WARMUP; i++) {
    await call('with-env', 'tiny');
    await call('no-env', null);
  }
  const samples = { with: [], without: [] };
  // Blocks of BLOCK calls per skill, alternating: a root server pre-stages the folders of its last call for the next
  // one (a state folder under a mode-700 parent must be staged), so strict ABAB would measure that cache, not the
  // environment.
  for (let i = 0; i < RUNS / BLOCK; i++) {
    const order = i % 2 === 0 ? ['with', 'without'] : ['without', 'with'];
    for (const k of order)
      for (let j = 0; j < BLOCK; j++)
        samples[k].push(await call(k === 'with' ? 'with-env' : 'no-env', k === 'with' ? 'tiny' : null));
  }
  await client.close();
  const mw = median(samples.with);
  const mo = median(samples.without);
  const rows = [
    ['same script, no environment', RUNS, mo, p95(samples.without)],
    ['same script, built environment (requirements.txt)', RUNS, mw, p95(samples.with)],
  ];
  process.stdout.write(
    `${'run'.padEnd(52)}${'n'.padStart(4)}${'median ms'.padStart(12)}${'p95 ms'.padStart(10)}\n`,
  );
  for (const [name, n, m, p] of rows)
    process.stdout.write(
      `${name.padEnd(52)}${String(n).padStart(4)}${m.toFixed(1).padStart(12)}${p.toFixed(1).padStart(10)}\n`,
    );
  const extra = mw - mo;
  const load = os.loadavg().map((l) => l.toFixed(2));
  process.stdout.write(
    `\nfirst call (builds the environment, then runs): ${firstCall.toFixed(0)} ms, of which the install ≈ ${(firstCall - mw).toFixed(0)} ms\n`,
  );
  process.stdout.write(
    `median extra cost of a built environment ${extra.toFixed(1)} ms (target ≤ 5 ms): ${extra <= 5 ? 'MET' : 'MISSED'}\n` +
      `load average at the end: ${load.join(' ')}\n`,
  );
  mkdirSync(join(here, 'results'), { recursive: true });
  writeFileSync(
    join(here, 'results', 'envs.json'),
    `${JSON.stringify({ machine: `${os.cpus().length} cores, ${os.cpus()[0]?.model ?? '?'}, ${os.type()} ${os.release()}`, load_average: load.map(Number), runs: RUNS, first_call_ms: Math.round(firstCall), install_ms: Math.round(firstCall - mw), median_ms: { with_env: mw, without_env: mo }, p95_ms: { with_env: p95(samples.with), without_env: p95(samples.without) }, extra_median_ms: extra, target_met: extra <= 5 }, null, 2)}\n`,
  );
} finally {
  removeTree(tmp);
}
