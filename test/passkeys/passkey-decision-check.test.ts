import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import { ConfigSchema } from '../../src/config/config-schema.js';
import { silentLogger } from '../../src/log.js';
import { createRunner } from '../../src/runner/create-runner.js';
import type { CallContext, Runner } from '../../src/runner/runner-types.js';
import { createSandbox } from '../../src/sandbox/index.js';
import { loadCatalog } from '../../src/skills/catalog.js';
import { writeTestSkill } from '../helpers/gated-fixture.js';
import { tempDir } from '../helpers/temp-dir.js';

const CANARY =
  'import os\nopen(os.path.join(os.environ["SKILL_FILES_DIR"], "canary.txt"), "w").write("ran")\nprint("{}")\n';

/** Asked in a console with an enrolled passkey: where a call that needs a passkey is asked. */
const CONSOLE: CallContext = { canAsk: true, channel: 'console', passkeyConsole: true };

describe('a decision without a passkey, applied to a call that needs one', () => {
  const opened: { runner: Runner; cleanup: () => void }[] = [];
  afterEach(async () => {
    for (const o of opened.splice(0)) {
      await o.runner.close();
      o.cleanup();
    }
  });

  function start() {
    const t = tempDir();
    writeTestSkill(join(t.dir, 'skills'), 'canary', { description: 'Writes a canary file.', script: CANARY });
    const config = ConfigSchema.parse({ skills: [join(t.dir, 'skills')], approval: { require: 'passkey' } });
    const catalog = loadCatalog(config.skills);
    const log = silentLogger();
    const sandbox = createSandbox({ log, env: process.env });
    const auditPath = join(t.dir, 'audit.db');
    const audit = openAuditStore({ path: auditPath });
    const runner = createRunner({
      catalog: () => catalog,
      config,
      log,
      version: '0.0.0-test',
      audit: () => Promise.resolve(audit),
      sandbox: () => Promise.resolve(sandbox),
      env: process.env,
      runsDir: join(t.dir, 'runs'),
      bundlesDir: join(t.dir, 'bundles'),
    });
    opened.push({ runner, cleanup: t.cleanup });
    const session = { id: 's1', transport: 'stdio' as const };
    const req = { tool: 'canary', session, skill: catalog.get('canary')!, input: {} };
    const ran = () =>
      existsSync(join(t.dir, 'runs')) &&
      readdirSync(join(t.dir, 'runs'), { recursive: true, encoding: 'utf8' }).some((p) =>
        p.endsWith('canary.txt'),
      );
    const reasons = () => {
      const a = openAuditStore({ path: auditPath, readOnly: true });
      try {
        return a.listCalls().map((r) => `${r.status ?? r.state}:${r.approvalReason ?? '-'}`);
      } finally {
        a.close();
      }
    };
    return { runner, session, req, ran, reasons };
  }

  it('refuses an approving answer from the client form continuing a console call: nothing runs', async () => {
    const { runner, session, req, ran, reasons } = start();
    const begun = await runner.begin(req, CONSOLE);
    expect(begun.kind).toBe('ask');
    if (begun.kind !== 'ask') return;
    const answer = { action: 'accept' as const, content: { decision: 'approved' } };
    const r = await runner.resume(begun.callId, session, answer, { canAsk: true, channel: 'elicitation' });
    expect(r.isError).toBe(true);
    expect(r.text).toContain('requires a passkey approval');
    expect(ran()).toBe(false);
    expect(reasons()).toEqual(['denied:passkey_required']);
  }, 60_000);

  it('refuses a console approval recorded without passkey evidence: nothing runs', async () => {
    const { runner, session, req, ran, reasons } = start();
    const begun = await runner.begin(req, CONSOLE);
    if (begun.kind !== 'ask') throw new Error(`not asked: ${begun.kind}`);
    const answer = { action: 'accept' as const, content: { decision: 'approved_for_session' } };
    const recorded = await runner.recordAnswer(begun.callId, session, answer, 'console');
    expect(recorded.kind).toBe('closed');
    expect(ran()).toBe(false);
    expect(reasons()).toEqual(['denied:passkey_required']);
  }, 60_000);
});
