import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgAuditLog } from '../../src/audit/postgres/open-pg-audit-log.js';
import { CHAIN_LOCK } from '../../src/audit/postgres/pg-schema.js';
import {
  createAuditDb,
  startTestPostgres,
  type TestAuditDb,
  type TestPostgres,
} from '../helpers/postgres.js';
import { buildAuditJs } from './helpers/build-audit-js.js';
import { trials } from '../helpers/trials.js';
import { waitFor } from '../helpers/wait-for.js';

// Writer processes SIGKILLed while they append to a real PostgreSQL: a transaction the kill interrupts leaves
// nothing, a batch the writer saw committed is all there, and the chain verifies.
const WRITER = fileURLToPath(new URL('./pg-writer.mjs', import.meta.url));
const TRIALS = trials(20);
const BATCH = 40;
let server: TestPostgres;
let db: TestAuditDb;
let built: ReturnType<typeof buildAuditJs>;

beforeAll(async () => {
  server = startTestPostgres();
  db = await createAuditDb(server);
  built = buildAuditJs('audit/postgres/open-pg-audit-log');
});
afterAll(() => {
  built?.cleanup();
  server?.cleanup();
});

/**
 * Runs one writer until it reported its first commit, then SIGKILLs it: after a random short delay, or (`held`) once
 * it waits inside its next transaction for the chain lock, which this test's own session holds meanwhile, so that
 * kill is certainly mid-transaction (the server shows the writer's backend waiting so, or the trial fails). Returns
 * the batches it reported committed.
 */
async function killMidWrite(tag: string, held: boolean): Promise<string[]> {
  const before = await backends();
  const child = spawn(process.execPath, [WRITER, built.entry, db.writerUrl, tag], {
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin', PGPASSWORD: db.writer.password },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const committed: string[] = [];
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => resolve(signal)),
  );
  const lines = createInterface({ input: child.stdout });
  const first = new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => {
      committed.push((JSON.parse(line) as { sessionId: string }).sessionId);
      if (committed.length === 1) resolve();
    });
    child.on('exit', () =>
      committed.length === 0 ? reject(new Error(`writer died: ${stderr}`)) : resolve(),
    );
  });
  if (held) {
    await server.superuser(db.database, async (c) => {
      await first;
      await c.query('SELECT pg_advisory_lock($1)', [CHAIN_LOCK]);
      try {
        // The writer's backend (not one that was there before it started), waiting for the lock in a transaction.
        await waitFor(
          async () => {
            const r = await c.query<{ pid: number }>(
              `SELECT pid FROM pg_stat_activity WHERE datname = $1 AND NOT (pid = ANY($2::int[]))
               AND xact_start IS NOT NULL AND wait_event_type = 'Lock' AND wait_event = 'advisory'`,
              [db.database, before],
            );
            return r.rows[0];
          },
          20_000,
          'the writer to wait for the chain lock inside its next transaction',
        );
        child.kill('SIGKILL');
        await exited;
      } finally {
        await c.query('SELECT pg_advisory_unlock($1)', [CHAIN_LOCK]);
      }
    });
  } else {
    await first;
    await new Promise((r) => setTimeout(r, Math.random() * 40));
    child.kill('SIGKILL');
  }
  expect(await exited).toBe('SIGKILL');
  lines.close();
  return committed;
}

/** The pids of the audit database's backends now. */
const backends = () =>
  server.superuser(db.database, async (c) =>
    (
      await c.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = $1', [db.database])
    ).rows.map((r) => r.pid),
  );

describe('a writer killed mid-transaction', () => {
  it(
    `leaves whole batches only, keeps every batch it saw committed, and the chain verifies (${TRIALS} trials)`,
    async () => {
      // Another writer appends all along: the killed writers' locks must not hold it up for long.
      const steady = openPgAuditLog({ url: db.writerUrl, env: { PGPASSWORD: db.writer.password } });
      let stop = false;
      let steadyCalls = 0;
      const steadyLoop = (async () => {
        while (!stop) {
          await steady.append({
            type: 'session_error',
            sessionId: 'steady',
            payload: { code: 'INTERNAL', ref: null, stage: 'transport' },
          });
          steadyCalls++;
          await new Promise((resolve) => setTimeout(resolve, 5));
        }
      })();
      const seen: string[] = [];
      try {
        // Every other kill lands while the writer waits inside its next transaction; the others, at random.
        for (let i = 0; i < TRIALS; i++) seen.push(...(await killMidWrite(`w${i}`, i % 2 === 1)));
      } finally {
        stop = true;
        await steadyLoop;
      }
      const events = [];
      for await (const e of steady.exportEvents()) events.push(e);
      const { chain } = await steady.verify();
      await steady.close();

      expect(chain).toMatchObject({ ok: true, events: events.length });
      const perSession = new Map<string, number>();
      for (const e of events) perSession.set(e.session_id, (perSession.get(e.session_id) ?? 0) + 1);
      expect(perSession.get('steady')).toBe(steadyCalls);
      perSession.delete('steady');
      // Every batch is all there or not there at all; every batch a writer was told was committed is there.
      expect([...perSession.values()].every((n) => n === BATCH)).toBe(true);
      for (const s of seen) expect(perSession.get(s), s).toBe(BATCH);
      // A busy machine takes seconds a trial (a writer process starts each time).
    },
    30_000 + TRIALS * 5_000,
  );
});
