import { join } from 'node:path';
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import { openAuditStore } from '../../src/audit/open-audit-store.js';
import type { AuditStore } from '../../src/audit/audit-store.js';
import { ConfigSchema } from '../../src/config/config-schema.js';
import { silentLogger } from '../../src/log.js';
import { createSkillsServer } from '../../src/mcp/create-server.js';
import { createRunner } from '../../src/runner/create-runner.js';
import { createSandbox, type Sandbox } from '../../src/sandbox/index.js';
import { loadCatalog } from '../../src/skills/catalog.js';

export interface InProcessOptions {
  /** Skill folders; calls are allowed by policy without asking. */
  skills: string[];
  /** Holds the runs and bundles folders and (unless `audit` is given) `audit.db`. */
  root: string;
  /** The audit log the runner writes (opened on first need in `root` otherwise); closed by `close`. */
  audit?: AuditStore;
  /** The sandbox (a real one for this machine otherwise); disposed of by `close`. */
  sandbox?: Sandbox;
  /** More configuration (a workspace, sandbox settings), as `skills-mcp.yaml` would hold it. */
  config?: Record<string, unknown>;
}

export interface InProcessServer {
  /** A real MCP client on its own session, legacy era, through an in-memory transport. */
  connect(id: string): Promise<Client>;
  /** Closes the clients, ends their sessions, then the runner, the sandbox and the audit log. */
  close(): Promise<void>;
}

/** The runner and the MCP server in this process, for tests that need to reach into what they are given. */
export function startInProcess(o: InProcessOptions): InProcessServer {
  const config = ConfigSchema.parse({
    ...o.config,
    skills: o.skills,
    approval: { mode: 'allow', fallback: 'rules-only', ...(o.config?.approval as object | undefined) },
  });
  const catalog = loadCatalog(config.skills);
  const log = silentLogger();
  const sandbox = o.sandbox ?? createSandbox({ log, env: process.env });
  let audit = o.audit;
  const runner = createRunner({
    catalog: () => catalog,
    config,
    log,
    version: '0.0.0-test',
    audit: () => Promise.resolve((audit ??= openAuditStore({ path: join(o.root, 'audit.db') }))),
    sandbox: () => Promise.resolve(sandbox),
    env: process.env,
    runsDir: join(o.root, 'runs'),
    bundlesDir: join(o.root, 'bundles'),
  });
  const server = createSkillsServer({ catalog: () => catalog, config, log, version: '0.0.0-test', runner });
  const sessions: { client: Client; session: { id: string; transport: 'stdio' } }[] = [];
  return {
    async connect(id) {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      const session = { id, transport: 'stdio' as const };
      await server.build(session).connect(serverSide);
      const client = new Client({ name: id, version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
      await client.connect(clientSide);
      sessions.push({ client, session });
      return client;
    },
    async close() {
      for (const { client, session } of sessions.splice(0)) {
        await client.close();
        await runner.endSession(session, 'client_closed');
      }
      await runner.close();
      await sandbox.dispose();
      audit?.close();
    },
  };
}
