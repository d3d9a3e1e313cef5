// Sustained throughput of the audit store with WAL + synchronous=FULL (every commit fsynced), in-process.
// Run after `npm run build`: node bench/audit.bench.mjs [--runs N] [--ms MS] [--log-calls N]
// An audited read-only call = tool_call_requested + tool_call_finished. Scenarios are interleaved per round
// (so load on a shared machine hits them alike); each figure is the median of the rounds. The last two write to
// logs that already hold --log-calls calls (default 100,000, about 165 MB each, filled before the first round), one
// with random call ids, one with the server's time-ordered ids.
import Database from 'better-sqlite3';
import { createHash, randomUUID } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, platform, release, tmpdir, totalmem } from 'node:os';
import { dirname, join } from 'node:path';
import process from 'node:process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { newCallId } from '../dist/audit/call-id.js';
import { openAuditStore } from '../dist/audit/index.js';

const { values } = parseArgs({
  options: { runs: { type: 'string' }, ms: { type: 'string' }, 'log-calls': { type: 'string' } },
});
const RUNS = Number(values.runs ?? 5);
const MS = Number(values.ms ?? 1000);
/** Calls already in the log of the long-lived-log scenarios. */
const LOG_CALLS = Number(values['log-calls'] ?? 100_000);
if (!Number.isInteger(LOG_CALLS) || LOG_CALLS < 0) {
  console.error(`--log-calls must be a whole number of calls (got ${values['log-calls']})`);
  process.exit(2);
}
/** Read-only records per commit in those scenarios: what the server's 10 ms window groups at ~1,600 calls/s. */
const PER_COMMIT = 16;
const TARGET = 1000;
const here = dirname(fileURLToPath(import.meta.url));
const sha = (s) => createHash('sha256').update(s).digest('hex');

const requested = {
  tool: 'read_skill_file',
  skill: 'pdf',
  input_sha256: sha('{"path":"references/forms.md","skill":"pdf"}'),
  input_bytes: 44,
  input_keys: ['path', 'skill'],
  bundle_sha256: sha('bundle'),
  approval_key: null,
  valid: true,
  read_only: true,
};
const finished = {
  status: 'ok',
  exit_code: null,
  duration_ms: 1,
  stdout_sha256: sha('contents'),
  stdout_bytes: 1234,
  stderr_bytes: 0,
  artifacts: [],
};

/** Opens a fresh store in a temp dir, runs `body`, cleans up. */
async function withStore(body) {
  const dir = mkdtempSync(join(tmpdir(), 'skills-mcp-audit-bench-'));
  const store = openAuditStore({ path: join(dir, 'audit.db') });
  try {
    const { sessionId } = store.startSession({ transport: 'stdio', server_version: 'bench' });
    return await body(store, sessionId);
  } finally {
    store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Calls `op` until `MS` have passed; returns completed ops per second. */
function timed(op) {
  for (let i = 0; i < 50; i++) op(); // warm-up
  let n = 0;
  const start = performance.now();
  let now = start;
  while (now - start < MS) {
    op();
    n++;
    now = performance.now();
  }
  return n / ((now - start) / 1000);
}

const scenarios = [
  {
    id: 'fsync_baseline',
    label: 'disk: bare 1-row commit (better-sqlite3, WAL, FULL)',
    eventsPerOp: 1,
    unit: 'commits',
    run: async () => {
      const dir = mkdtempSync(join(tmpdir(), 'skills-mcp-audit-bench-'));
      const db = new Database(join(dir, 'raw.db'));
      try {
        db.pragma('journal_mode = WAL');
        db.pragma('synchronous = FULL');
        db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY, x TEXT)');
        const insert = db.prepare('INSERT INTO t (x) VALUES (?)');
        const tx = db.transaction(() => insert.run('x'));
        return timed(() => tx.immediate());
      } finally {
        db.close();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  },
  {
    id: 'per_event_commit',
    label: 'read-only call, each event its own commit (append)',
    eventsPerOp: 2,
    unit: 'calls',
    run: () =>
      withStore((store, sessionId) =>
        timed(() => {
          const { callId } = store.append({ type: 'tool_call_requested', sessionId, payload: requested });
          store.append({ type: 'tool_call_finished', sessionId, callId, payload: finished });
        }),
      ),
  },
  {
    id: 'pair_commit',
    label: 'read-only call, both events in one commit (appendMany)',
    eventsPerOp: 2,
    unit: 'calls',
    run: () =>
      withStore((store, sessionId) => {
        let i = 0;
        return timed(() => {
          const callId = `c${i++}`;
          store.appendMany([
            { type: 'tool_call_requested', sessionId, callId, payload: requested },
            { type: 'tool_call_finished', sessionId, callId, payload: finished },
          ]);
        });
      }),
  },
  ...[8, 32].map((concurrency) => ({
    id: `group_commit_${concurrency}`,
    label: `read-only call, group commit (appendAsync), ${concurrency} concurrent calls`,
    eventsPerOp: 2,
    unit: 'calls',
    run: () =>
      withStore(async (store, sessionId) => {
        let stop = false;
        let n = 0;
        const worker = async () => {
          while (!stop) {
            // As the runner records a read-only call: both events queued at once, one group commit.
            const callId = newCallId();
            await Promise.all([
              store.appendAsync({ type: 'tool_call_requested', sessionId, callId, payload: requested }),
              store.appendAsync({ type: 'tool_call_finished', sessionId, callId, payload: finished }),
            ]);
            n++;
          }
        };
        const start = performance.now();
        const workers = Array.from({ length: concurrency }, worker);
        await sleep(MS);
        stop = true;
        const counted = n;
        const elapsed = performance.now() - start;
        await Promise.all(workers);
        return counted / (elapsed / 1000);
      }),
  })),
];

/**
 * A log that has served LOG_CALLS read-only calls, its call ids made by `newId`: opened once, kept across rounds.
 * Call ids key the `calls` table and the index of each call's events: random ids put every new call on a random
 * page of indexes that grow with the log, time-ordered ones on their last page.
 */
const longLogs = new Map();
function longLog(kind, newId) {
  let l = longLogs.get(kind);
  if (l !== undefined) return l;
  const dir = mkdtempSync(join(tmpdir(), 'skills-mcp-audit-bench-'));
  const store = openAuditStore({ path: join(dir, 'audit.db'), newId });
  const { sessionId } = store.startSession({ transport: 'http', server_version: 'bench' });
  const calls = (n) => {
    const events = [];
    for (let i = 0; i < n; i++) {
      const callId = newId();
      events.push(
        { type: 'tool_call_requested', sessionId, callId, payload: requested },
        { type: 'tool_call_finished', sessionId, callId, payload: finished },
      );
    }
    store.appendMany(events);
  };
  for (let n = 0; n < LOG_CALLS; n += 500) calls(Math.min(500, LOG_CALLS - n));
  l = { dir, store, calls };
  longLogs.set(kind, l);
  return l;
}

scenarios.push(
  ...[
    ['random', 'random call ids (uuid v4)', randomUUID],
    ['time_ordered', "the server's call ids (time-ordered)", newCallId],
  ].map(([kind, ids, newId]) => ({
    id: `long_log_${kind}_ids`,
    label: `read-only call, ${PER_COMMIT} per commit, log of ${LOG_CALLS} calls, ${ids}`,
    eventsPerOp: 2,
    unit: 'calls',
    run: () => {
      const { calls } = longLog(kind, newId);
      return timed(() => calls(PER_COMMIT)) * PER_COMMIT;
    },
  })),
);

const perRun = Object.fromEntries(scenarios.map((s) => [s.id, []]));
for (let round = 0; round < RUNS; round++) {
  for (const s of scenarios) perRun[s.id].push(await s.run());
  process.stderr.write(`round ${round + 1}/${RUNS} done\n`);
}

for (const { dir, store } of longLogs.values()) {
  store.close();
  rmSync(dir, { recursive: true, force: true });
}

const median = (xs) => {
  const a = [...xs].sort((x, y) => x - y);
  const m = a.length >> 1;
  return a.length % 2 ? a[m] : (a[m - 1] + a[m]) / 2;
};
const results = scenarios.map((s) => {
  const ops = median(perRun[s.id]);
  return {
    id: s.id,
    label: s.label,
    unit: `${s.unit}/s`,
    median_per_s: Math.round(ops),
    median_events_per_s: Math.round(ops * s.eventsPerOp),
    runs_per_s: perRun[s.id].map(Math.round),
  };
});

const sqlite = (() => {
  const db = new Database(':memory:');
  const v = db.prepare('SELECT sqlite_version() AS v').get().v;
  db.close();
  return v;
})();
const machine = {
  cpu: cpus()[0]?.model ?? 'unknown',
  cores: cpus().length,
  memory_gib: Math.round(totalmem() / 2 ** 30),
  os: `${platform()} ${release()}`,
  node: process.version,
  sqlite,
  tmpdir: tmpdir(),
};

const rows = [['scenario', 'median', 'events/s', `runs (${RUNS} × ${MS} ms)`]];
for (const r of results) {
  rows.push([r.label, `${r.median_per_s} ${r.unit}`, String(r.median_events_per_s), r.runs_per_s.join(' ')]);
}
const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
console.log(
  `audit store: WAL, synchronous=FULL — ${machine.cpu}, ${machine.cores} cores, node ${machine.node}, SQLite ${sqlite}`,
);
for (const r of rows) console.log(r.map((c, i) => c.padEnd(widths[i])).join('  '));
const met = results.filter((r) => r.unit === 'calls/s' && r.median_per_s >= TARGET).map((r) => r.id);
console.log(
  `target ≥ ${TARGET} audited read-only calls/s: ${met.length > 0 ? `met by ${met.join(', ')}` : 'not met'}`,
);

const out = join(here, 'results', 'audit.json');
mkdirSync(dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify(
    {
      bench: 'audit',
      date: new Date().toISOString(),
      machine,
      config: {
        journal_mode: 'wal',
        synchronous: 'full',
        runs: RUNS,
        ms_per_run: MS,
        long_log_calls: LOG_CALLS,
        long_log_calls_per_commit: PER_COMMIT,
      },
      target: { read_only_calls_per_s: TARGET, met_by: met },
      results,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${out}`);
