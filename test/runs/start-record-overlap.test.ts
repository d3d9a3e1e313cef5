import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import type { AuditStore } from '../../src/audit/audit-store.js';
import { STOPPED_REFUSAL } from '../../src/audit/is-stopped-refusal.js';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import type { AppendInput } from '../../src/audit/types.js';
import { SkillsError } from '../../src/errors.js';
import { silentLogger } from '../../src/log.js';
import { createSandbox } from '../../src/sandbox/index.js';
import { startInProcess } from '../helpers/in-process-server.js';
import { isLinux, tempDirs } from '../sandbox/helpers.js';
import type { ReplicaLog } from '../../src/audit/replica-log.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const unhandled: unknown[] = [];
process.on('unhandledRejection', (e) => unhandled.push(e));

/** How the commit of `tool_call_started` ends, 400 ms after it was asked for. */
type Mode = 'audit-failed' | 'stopped' | 'lease-lost' | 'ok';

/**
 * One gated call of a skill that leaves a file behind, in a server whose audit log takes 400 ms to answer the
 * commit of `tool_call_started` (the sandbox gets the run ready meanwhile), then ends it as `mode` says. Skills in a
 * folder 65534 cannot reach (`staged`) run on a root server's pre-staged launchers.
 */
async function gatedCall(mode: Mode, staged: boolean) {
  const root = await dirs.make('skills-mcp-overlap-', staged ? 0o700 : 0o755);
  const skills = join(root, 'skills');
  mkdirSync(join(skills, 'touch', 'scripts'), { recursive: true });
  writeFileSync(
    join(skills, 'touch', 'SKILL.md'),
    '---\nname: touch\ndescription: Creates a file. Use in tests.\nentry_point: scripts/main.sh\n---\n\nTouches.\n',
  );
  writeFileSync(
    join(skills, 'touch', 'scripts', 'main.sh'),
    `touch "$SKILL_FILES_DIR/ran"; sleep 0.5; echo '{}'\n`,
  );
  const store = openAuditStore({ path: join(root, 'audit.db') });
  let fresh = true;
  let startedAt = 0;
  // A log shared by replicas whose peers record nothing: only this process's lease matters here.
  const replicas: ReplicaLog = {
    pendingCall: () => Promise.resolve(undefined),
    gateEventsOf: () => Promise.resolve([]),
    decisionsOf: () => Promise.resolve([]),
    leaseFresh: () => fresh,
    onLeaseLost: () => () => undefined,
  };
  const audit = new Proxy(store, {
    get(t, p) {
      if (p === 'replicas') return replicas;
      if (p === 'appendMany')
        return async (inputs: readonly AppendInput[]) => {
          if (!inputs.some((i) => i.type === 'tool_call_started')) return t.appendMany(inputs);
          await sleep(400);
          if (mode === 'audit-failed')
            throw new SkillsError('AUDIT_FAILED', 'audit log write failed: disk full');
          if (mode === 'stopped') throw new SkillsError('AUDIT_FAILED', `refused: ${STOPPED_REFUSAL}`);
          if (mode === 'lease-lost') fresh = false;
          const written = t.appendMany(inputs);
          startedAt = Date.now();
          return written;
        };
      const v = Reflect.get(t, p) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  }) satisfies AuditStore;
  // The sandbox's own per-call folders, watched for the file the script leaves.
  const sandbox = createSandbox({ log: silentLogger(), env: process.env });
  const outs: string[] = [];
  const createOutputDir = sandbox.createOutputDir.bind(sandbox);
  sandbox.createOutputDir = async (parent?: string) => {
    const d = await createOutputDir(parent);
    outs.push(d);
    return d;
  };
  let ranAt = 0;
  const poll = setInterval(() => {
    if (ranAt === 0 && outs.some((d) => existsSync(join(d, 'files', 'ran')))) ranAt = Date.now();
  }, 3);
  const server = startInProcess({ skills: [skills], root, audit, sandbox });
  try {
    const client = await server.connect(`overlap-${mode}`);
    const result = await client
      .callTool({ name: 'touch', arguments: {} })
      .catch((e: unknown) => ({ thrown: String(e) }));
    // Kept: a script that ran anyway would leave its file late; nothing happens when all is well.
    await sleep(300);
    return { result, ranAt, startedAt, states: store.listCalls().map((c) => c.state) };
  } finally {
    clearInterval(poll);
    await server.close();
  }
}

describe.skipIf(!isLinux).each([false, true])(
  'the sandbox gets ready while tool_call_started is written (staged: %s)',
  (staged) => {
    it.each(['audit-failed', 'stopped', 'lease-lost'] as Mode[])(
      '%s: nothing runs, the call is closed, and no promise is left rejected unhandled',
      async (mode) => {
        const r = await gatedCall(mode, staged);
        expect(r.ranAt, JSON.stringify(r.result)).toBe(0);
        expect(unhandled).toEqual([]);
        expect(r.states).not.toContain('started');
      },
      30_000,
    );

    it('ok: the script starts once the record is durable', async () => {
      const r = await gatedCall('ok', staged);
      expect(r.ranAt, JSON.stringify(r.result)).toBeGreaterThan(0);
      expect(r.ranAt).toBeGreaterThanOrEqual(r.startedAt - 5);
      expect(r.states).toEqual(['finished']);
      expect(unhandled).toEqual([]);
    }, 30_000);
  },
);
