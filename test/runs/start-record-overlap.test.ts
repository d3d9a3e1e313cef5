import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { chmod } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import type { AppendInput } from '../../src/audit/types.js';
import { ConfigSchema } from '../../src/config/config-schema.js';
import { SkillsError } from '../../src/errors.js';
import { STOPPED_REFUSAL } from '../../src/audit/is-stopped-refusal.js';
import { silentLogger } from '../../src/log.js';
import { createSkillsServer } from '../../src/mcp/create-server.js';
import { createRunner } from '../../src/runner/create-runner.js';
import { createSandbox } from '../../src/sandbox/index.js';
import { loadCatalog } from '../../src/skills/catalog.js';
import { isLinux, tempDirs } from '../sandbox/helpers.js';

const dirs = tempDirs();
afterAll(() => dirs.cleanup());

const unhandled: unknown[] = [];
process.on('unhandledRejection', (e) => unhandled.push(e));

type Mode = 'audit-failed' | 'stopped' | 'lease-lost' | 'ok';

async function gatedCall(mode: Mode, staged: boolean) {
  const root = await dirs.make('skills-mcp-overlap-', staged ? 0o700 : 0o755);
  const skills = join(root, 'skills');
  mkdirSync(join(root, 'out'), { mode: 0o777 });
  await chmod(join(root, 'out'), 0o777);
  mkdirSync(join(skills, 'touch', 'scripts'), { recursive: true });
  writeFileSync(
    join(skills, 'touch', 'SKILL.md'),
    '---\nname: touch\ndescription: Creates a file. Use in tests.\nentry_point: scripts/main.sh\n---\n\nTouches.\n',
  );
  writeFileSync(
    join(skills, 'touch', 'scripts', 'main.sh'),
    `touch "$SKILL_FILES_DIR/ran"; sleep 0.5; echo '{}'\n`,
  );
  const config = ConfigSchema.parse({
    skills: [skills],
    approval: { mode: 'allow', fallback: 'rules-only' },
  });
  const catalog = loadCatalog(config.skills);
  const log = silentLogger();
  const store = openAuditStore({ path: join(root, 'audit.db') });
  let fresh = true;
  let startedAt = 0;
  const events: string[] = [];
  const wrapped = new Proxy(store, {
    get(t, p) {
      if (p === 'leaseFresh') return () => fresh;
      if (p === 'appendMany')
        return async (inputs: readonly AppendInput[]) => {
          events.push(...inputs.map((i) => i.type));
          if (inputs.some((i) => i.type === 'tool_call_started')) {
            await sleep(400);
            if (mode === 'audit-failed')
              throw new SkillsError('AUDIT_FAILED', 'audit log write failed: disk full');
            if (mode === 'stopped') throw new SkillsError('AUDIT_FAILED', `refused: ${STOPPED_REFUSAL}`);
            if (mode === 'lease-lost') fresh = false;
            const r = t.appendMany(inputs);
            startedAt = Date.now();
            return r;
          }
          return t.appendMany(inputs);
        };
      const v = Reflect.get(t, p) as unknown;
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(t) : v;
    },
  });
  const sandbox = createSandbox({ log, env: process.env });
  const outs: string[] = [];
  const mk = sandbox.createOutputDir.bind(sandbox);
  sandbox.createOutputDir = async (parent?: string) => {
    const d = await mk(parent);
    outs.push(d);
    return d;
  };
  let seenAt = 0;
  const poll = setInterval(() => {
    if (seenAt === 0 && outs.some((d) => existsSync(join(d, 'files', 'ran')))) seenAt = Date.now();
  }, 3);
  const runner = createRunner({
    catalog: () => catalog,
    config,
    log,
    version: '0.0.0-test',
    audit: () => Promise.resolve(wrapped),
    sandbox: () => Promise.resolve(sandbox),
    env: process.env,
    runsDir: join(root, 'runs'),
    bundlesDir: join(root, 'bundles'),
  });
  const server = createSkillsServer({ catalog: () => catalog, config, log, version: '0.0.0-test', runner });
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const session = { id: `overlap-${mode}`, transport: 'stdio' as const };
  await server.build(session).connect(serverSide);
  const client = new Client(
    { name: 'overlap', version: '1.0.0' },
    { versionNegotiation: { mode: 'legacy' } },
  );
  await client.connect(clientSide);
  try {
    const result = await client
      .callTool({ name: 'touch', arguments: {} })
      .catch((e: unknown) => ({ thrown: String(e) }));
    await sleep(300);
    clearInterval(poll);
    const ran = seenAt !== 0;
    return { result, ran, ranAt: seenAt, startedAt, events, store, outs };
  } finally {
    await client.close();
    await runner.endSession(session, 'client_closed');
    await runner.close();
    await sandbox.dispose();
  }
}

describe.skipIf(!isLinux).each([false, true])(
  'overlap of tool_call_started with the sandbox (staged %s)',
  (staged) => {
    it.each(['audit-failed', 'stopped', 'lease-lost'] as Mode[])(
      '%s: nothing runs, no unhandled rejection',
      async (mode) => {
        const r = await gatedCall(mode, staged);
        expect(r.ran).toBe(false);
        expect(unhandled).toEqual([]);
        // The call is closed in the log, never left as running.
        expect(r.store.listCalls().map((c) => c.state)).not.toContain('started');
        r.store.close();
      },
      30_000,
    );

    it('ok: the script starts after the record', async () => {
      const r = await gatedCall('ok', staged);
      expect(r.ran, JSON.stringify(r.result)).toBe(true);
      expect(r.ranAt).toBeGreaterThanOrEqual(r.startedAt - 5);
      expect(unhandled).toEqual([]);
      r.store.close();
    }, 30_000);
  },
);
