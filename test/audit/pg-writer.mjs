// A real process appending to the PostgreSQL audit log until it is killed, for the crash test.
//   node pg-writer.mjs <open-pg-audit-log.js> <url> <tag>     (password in PGPASSWORD)
// Appends batches of 40 events (20 calls: requested + finished) in one transaction each, session `<tag>-<n>`, and
// reports each committed batch on stdout as one JSON line, written synchronously after appendMany resolved.
import { createHash } from 'node:crypto';
import { writeSync } from 'node:fs';
import process from 'node:process';
import { pathToFileURL } from 'node:url';

const [entry, url, tag] = process.argv.slice(2);
const { openPgAuditLog } = await import(pathToFileURL(entry).href);
const sha = (s) => createHash('sha256').update(s).digest('hex');
const requested = {
  tool: 'run_skill_script',
  skill: 'pdf',
  script: 'scripts/fill.py',
  input_sha256: sha('{}'),
  input_bytes: 2,
  input_keys: [],
  bundle_sha256: sha('bundle'),
  approval_key: sha('key'),
  valid: true,
};
const finished = {
  status: 'ok',
  exit_code: 0,
  duration_ms: 1,
  stdout_sha256: null,
  stdout_bytes: 0,
  stderr_bytes: 0,
  artifacts: [],
};

const log = openPgAuditLog({ url, env: process.env, max: 1 });
for (let n = 0; ; n++) {
  const sessionId = `${tag}-${n}`;
  const batch = [];
  for (let c = 0; c < 20; c++) {
    const callId = `${sessionId}-c${c}`;
    batch.push({ type: 'tool_call_requested', sessionId, callId, payload: requested });
    batch.push({ type: 'tool_call_finished', sessionId, callId, payload: finished });
  }
  const events = await log.appendMany(batch);
  writeSync(1, `${JSON.stringify({ sessionId, last: events.at(-1).eventId })}\n`);
}
