import Database from 'better-sqlite3';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { GENESIS_HASH, eventHash, openAuditStore } from '../../../src/audit/index.js';
import { connectClient, type Connected } from '../../http/helpers/connect-client.js';
import { CLI, servedUrl, spawnCli, type SpawnedServer } from '../../http/helpers/spawn-server.js';

export type Decision = 'approved' | 'denied';

/** The servers' bearer token (`SKILLS_MCP_TOKEN`): with it, the client's own approval form counts over HTTP. */
export const TOKEN = 'anchored-server-test-token-0123456789';

/** A real client whose approvals are answered from a queue. */
export async function client(url: string, answers: Decision[]): Promise<Connected> {
  const c = await connectClient(url, 'legacy', TOKEN);
  c.client.setRequestHandler('elicitation/create', () =>
    Promise.resolve({ action: 'accept', content: { decision: answers.shift() ?? 'denied' } }),
  );
  return c;
}

/** The built binary over HTTP on an ephemeral port, with the given config text and audit log. */
export async function serve(
  dir: string,
  skills: string,
  config: string,
  auditPath: string,
): Promise<{ server: SpawnedServer; url: string }> {
  const file = join(dir, `config-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(file, config);
  const server = spawnCli(
    ['--http', '--port', '0', '--skills', skills, '--config', file, '--audit', auditPath, '--no-watch'],
    { SKILLS_MCP_TOKEN: TOKEN },
  );
  return { server, url: await servedUrl(server) };
}

/** SIGTERM, and the server must exit 0. */
export const stop = async (s: SpawnedServer) => {
  s.proc.kill('SIGTERM');
  expect(await s.exited).toBe(0);
};

/** `skills-mcp audit <args…> --audit DB` with the built binary. */
export function auditCli(db: string, ...args: string[]) {
  const r = spawnSync(process.execPath, [CLI, 'audit', ...args, '--audit', db], { encoding: 'utf8' });
  return { code: r.status, out: r.stdout, err: r.stderr };
}

/** `skills-mcp audit verify` on a copy, checked against the given anchors and key. */
export const verify = (db: string, anchors: string, key: string) =>
  auditCli(db, 'verify', '--anchors', anchors, '--anchor-key', key);

/**
 * What an attacker with write access to the database does: lift the guards and edit; when `edit` returns an event
 * id, recompute the chain from there and make the summary tables agree.
 */
export function tamper(path: string, edit: (db: Database.Database) => number | undefined | void): void {
  const db = new Database(path);
  db.exec('DROP TRIGGER events_no_update; DROP TRIGGER events_no_delete; DROP TRIGGER events_extend_chain;');
  const rehashFrom = edit(db) ?? undefined;
  if (rehashFrom !== undefined) {
    const before = db.prepare('SELECT hash FROM events WHERE event_id = ?').get(rehashFrom - 1) as
      { hash: string } | undefined;
    let prev = before?.hash ?? GENESIS_HASH;
    const rows = db.prepare('SELECT * FROM events WHERE event_id >= ? ORDER BY event_id').all(rehashFrom) as {
      event_id: number;
      ts: number;
      session_id: string;
      call_id: string | null;
      type: string;
      payload: string;
    }[];
    const set = db.prepare('UPDATE events SET prev_hash = ?, hash = ? WHERE event_id = ?');
    for (const r of rows) {
      const hash = eventHash(prev, { ...r, payload: JSON.parse(r.payload) as unknown });
      set.run(prev, hash, r.event_id);
      prev = hash;
    }
  }
  db.close();
  if (rehashFrom !== undefined) {
    const store = openAuditStore({ path, recover: false, verifyOnOpen: false });
    store.rebuildProjections();
    store.close();
  }
}

/** Flips the first denial to approved and re-hashes from there: the chain alone verifies again. */
export function flipDenial(d: Database.Database): number {
  const { event_id } = d
    .prepare(
      `SELECT event_id FROM events WHERE type = 'approval_decided' AND payload LIKE '%"decision":"denied"%'`,
    )
    .get() as { event_id: number };
  d.prepare(
    `UPDATE events SET payload = replace(payload, '"decision":"denied"', '"decision":"approved"') WHERE event_id = ?`,
  ).run(event_id);
  return event_id;
}

/** Removes the database's copy of the newest anchor, when the schema has one (the attacker edits that too). */
export function dropAnchorCopy(d: Database.Database): void {
  const has = d.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'last_anchor'").get();
  if (has !== undefined) d.exec('DELETE FROM last_anchor');
}
