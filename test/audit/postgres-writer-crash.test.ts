import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openPgAuditLog } from '../../src/audit/postgres/open-pg-audit-log.js';
import {
  createAuditDb,
  startTestPostgres,
  type TestAuditDb,
  type TestPostgres,
} from '../helpers/postgres.js';
import { buildAuditJs } from './helpers/build-audit-js.js';
import { trials } from '../helpers/trials.js';

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

/** Runs one writer until it reported `batches` commits, then SIGKILLs it after a random short delay. */
async function killMidWrite(tag: string): Promise<string[]> {
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
  await new Promise<void>((resolve, reject) => {
    lines.on('line', (line) => {
      committed.push((JSON.parse(line) as { sessionId: string }).sessionId);
      if (committed.length === 1) setTimeout(() => (child.kill('SIGKILL'), resolve()), Math.random() * 40);
    });
    child.on('exit', () =>
      committed.length === 0 ? reject(new Error(`writer died: ${stderr}`)) : resolve(),
    );
  });
  expect(await exited).toBe('SIGKILL');
  lines.close();
  return committed;
}

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
        for (let i = 0; i < TRIALS; i++) seen.push(...(await killMidWrite(`w${i}`)));
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
      // The kills did land inside transactions: the server saw clients vanish with a transaction open.
      const midTransaction = readFileSync(server.logFile, 'utf8').match(
        /unexpected EOF on client connection with an open transaction/g,
      );
      expect(midTransaction?.length ?? 0).toBeGreaterThanOrEqual(TRIALS / 2);
      // A busy machine takes seconds a trial (a writer process starts each time).
    },
    30_000 + TRIALS * 5_000,
  );
});
