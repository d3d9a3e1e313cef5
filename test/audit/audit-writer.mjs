// A real process writing to the audit store, for the crash and concurrency tests.
//   node audit-writer.mjs crash <db> <store-module>       open (recovery), one call requested+started, then
//                                                       write other calls until SIGKILLed
//   node audit-writer.mjs calls <db> <store-module> <n>   open, write n complete calls, end the session, exit
// Each committed event is reported on stdout as one JSON line, written synchronously after append returns.
import { Buffer } from 'node:buffer';
import { createHash } from 'node:crypto';
import { writeSync } from 'node:fs';
import process from 'node:process';
import { setInterval } from 'node:timers';
import { pathToFileURL } from 'node:url';

const [mode, dbPath, storeModule, n] = process.argv.slice(2);
const { openAuditStore } = await import(pathToFileURL(storeModule).href);

function emit(obj) {
  const buf = Buffer.from(`${JSON.stringify(obj)}\n`);
  let off = 0;
  while (off < buf.length) {
    try {
      off += writeSync(1, buf, off);
    } catch (e) {
      if (e.code !== 'EAGAIN') throw e;
    }
  }
}
const sha = (s) => createHash('sha256').update(s).digest('hex');
const report = (e) =>
  emit({
    kind: 'event',
    event_id: e.eventId,
    hash: e.hash,
    type: e.type,
    call_id: e.callId,
    session_id: e.sessionId,
  });

const store = openAuditStore({ path: dbPath, busyTimeoutMs: 60_000 });
emit({ kind: 'recovery', report: store.recovery, pid: process.pid });
const session = store.startSession({ transport: 'stdio', server_version: '0.0.0-test' });
report(session);
const sessionId = session.sessionId;

const requested = (i) => ({
  tool: 'run_skill_script',
  skill: 'demo',
  script: 'scripts/main.py',
  input_sha256: sha(`input-${i}`),
  input_bytes: 10 + i,
  input_keys: ['q'],
  bundle_sha256: sha('bundle'),
  approval_key: sha(`key-${i % 3}`),
  valid: true,
});
const started = {
  argv: ['python3', 'scripts/main.py'],
  env_keys: ['PATH'],
  sandbox: { adapter: 'bwrap', active: true, network: 'none' },
  output_dir: '/tmp/out',
};
const finished = (i) => ({
  status: 'ok',
  exit_code: 0,
  duration_ms: i,
  stdout_sha256: sha(`out-${i}`),
  stdout_bytes: 5,
  stderr_bytes: 0,
  artifacts: [{ path: `files/out-${i}.txt`, sha256: sha(`file-${i}`), bytes: i }],
});
const policy = {
  decision: 'allow',
  rule: 'rules.allow[0]',
  risk: { level: 'low', code: 'none', reason: 'no findings' },
};

function call(i, finish = true) {
  const req = store.append({ type: 'tool_call_requested', sessionId, payload: requested(i) });
  report(req);
  const callId = req.callId;
  report(store.append({ type: 'policy_decided', sessionId, callId, payload: policy }));
  report(store.append({ type: 'tool_call_started', sessionId, callId, payload: started }));
  if (finish) report(store.append({ type: 'tool_call_finished', sessionId, callId, payload: finished(i) }));
  return callId;
}

if (mode === 'crash') {
  const victim = call(0, false);
  emit({ kind: 'victim', call_id: victim });
  // Keep writing so the kill lands at a random point, often inside a transaction or its fsync.
  for (let i = 1; i <= 5000; i++) call(i);
  setInterval(() => {}, 1000);
} else {
  for (let i = 0; i < Number(n); i++) call(i);
  report(store.endSession(sessionId, 'client_closed'));
  store.close();
  emit({ kind: 'done' });
}
