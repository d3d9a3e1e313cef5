import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { gatedFixture, writeTestSkill } from '../helpers/gated-fixture.js';
import { connectClient, type Connected } from './helpers/connect-client.js';
import { servedUrl, spawnCli, type SpawnedServer } from './helpers/spawn-server.js';

const TOKEN = 'http-session-folder-token-0123456789';
/** Keeps a note in the session folder and says what the folder held before. */
const KEEP = `import json, os
d = os.environ["SKILL_SESSION_DIR"]
before = sorted(os.listdir(d))
open(os.path.join(d, "kept.txt"), "w").write(json.load(open(os.environ["SKILL_INPUT_FILE"]))["note"])
print(json.dumps({"before": before}))
`;
const NOTE = 'skill-session://files/kept.txt';

const approveAll = (c: Connected) =>
  c.client.setRequestHandler('elicitation/create', () =>
    Promise.resolve({ action: 'accept', content: { decision: 'approved' } }),
  );
const sessionUris = async (c: Connected) =>
  (await c.client.listResources()).resources
    .map((r) => r.uri)
    .filter((u) => u.startsWith('skill-session://'));

describe('session folders over Streamable HTTP (built binary, real sandbox)', () => {
  let fx: ReturnType<typeof gatedFixture> | undefined;
  let server: SpawnedServer | undefined;
  const clients: Connected[] = [];
  afterEach(async () => {
    for (const c of clients.splice(0)) await c.client.close().catch(() => undefined);
    server?.proc.kill('SIGTERM');
    await server?.exited;
    fx?.cleanup();
  });

  it('gives each legacy session and each principal its own folder, which no other can list, read or reach', async () => {
    fx = gatedFixture('approval:\n  mode: ask\n');
    writeTestSkill(fx.skills, 'keeper', {
      description: 'Keeps a note in the session folder. Use in tests.',
      frontmatter: 'input_schema:\n  type: object\n  properties:\n    note: { type: string }\n',
      script: KEEP,
    });
    server = spawnCli(['--http', '--port', '0', ...fx.args], { SKILLS_MCP_TOKEN: TOKEN });
    const url = await servedUrl(server);
    const connect = async (era: 'legacy' | 'auto') => {
      const c = await connectClient(url, era, TOKEN);
      clients.push(c);
      approveAll(c);
      return c;
    };
    const a = await connect('legacy');
    const b = await connect('legacy');
    const modern = await connect('auto');

    const first = await a.client.callTool({ name: 'keeper', arguments: { note: 'from a' } });
    expect(first.structuredContent).toEqual({ before: [] });
    const again = await a.client.callTool({ name: 'keeper', arguments: { note: 'from a again' } });
    expect(again.structuredContent).toEqual({ before: ['kept.txt'] });
    expect(await sessionUris(a)).toEqual([NOTE]);
    const read = await a.client.readResource({ uri: NOTE });
    expect((read.contents[0] as { text: string }).text).toBe('from a again');

    // Same token, another legacy session; and the token's stateless (modern) session: neither sees a's note.
    for (const other of [b, modern]) {
      expect(await sessionUris(other)).toEqual([]);
      await expect(other.client.readResource({ uri: NOTE })).rejects.toThrow(/no such file in this session/);
      const own = await other.client.callTool({ name: 'keeper', arguments: { note: 'other' } });
      expect(own.structuredContent).toEqual({ before: [] });
    }
    const read2 = await a.client.readResource({ uri: NOTE });
    expect((read2.contents[0] as { text: string }).text).toBe('from a again');
    const sessions = join(dirname(fx.auditPath), 'runs', 'sessions');
    expect(readdirSync(sessions)).toHaveLength(3);

    // A legacy session that ends (DELETE) takes its folder with it; the others stay.
    await a.transport.terminateSession();
    await expect.poll(() => readdirSync(sessions).length).toBe(2);
    expect(existsSync(sessions)).toBe(true);
  });
});
