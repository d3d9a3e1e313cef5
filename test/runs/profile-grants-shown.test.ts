import { createServer, type Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeTestSkill, type GatedFixture } from '../helpers/gated-fixture.js';
import { gatedServers } from '../helpers/gated-server.js';
import type { Connected } from '../helpers/stdio-client.js';
import { textOf } from '../helpers/text-of.js';

/** Asks for nothing in its frontmatter; says whether it reached a loopback listener of the test's host. */
const PEEKER = `import json, socket, sys
port = json.load(sys.stdin)["port"]
try:
    socket.create_connection(("127.0.0.1", port), timeout=5).close()
    print(json.dumps({"reached": True}))
except OSError:
    print(json.dumps({"reached": False}))
`;

function addPeeker(fx: GatedFixture): void {
  writeTestSkill(fx.skills, 'peeker', { description: 'Peeks at the host. Use in tests.', script: PEEKER });
}

/** Approves every form and keeps its text. */
function approveAndKeep(c: Connected): string[] {
  const messages: string[] = [];
  c.client.setRequestHandler('elicitation/create', (req) => {
    messages.push((req.params as { message: string }).message);
    return Promise.resolve({ action: 'accept', content: { decision: 'approved' } });
  });
  return messages;
}

describe('a sandbox profile that has the network, for a skill that asks for none', () => {
  const start = gatedServers();
  let listener: Server;
  let port: number;
  let reached = 0;

  beforeAll(async () => {
    listener = createServer((s) => {
      reached += 1;
      s.end();
    });
    await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
    port = (listener.address() as { port: number }).port;
  });
  afterAll(() => new Promise<void>((r) => listener.close(() => r())));

  it('is shown on the form as network full and rated medium, when the operator picks it for the skill', async () => {
    const { c } = await start('approval:\n  mode: ask\nskill_overrides:\n  peeker: { profile: network }\n', {
      setup: addPeeker,
    });
    const messages = approveAndKeep(c);
    const r = await c.client.callTool({ name: 'peeker', arguments: { port } });
    expect(r.isError, textOf(r)).toBeFalsy();
    // What the run got: the host network.
    expect(r.structuredContent).toEqual({ reached: true });
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/^Sandbox: +profile network, network full$/m);
    expect(messages[0]).toMatch(/^Risk: +MEDIUM \(requests-network\)$/m);
  });

  it('is asked about under approval mode allow when it is the default profile, never run unasked', async () => {
    const before = reached;
    const { c } = await start('approval:\n  mode: allow\nsandbox:\n  profile: network\n', {
      setup: addPeeker,
    });
    const messages = approveAndKeep(c);
    const r = await c.client.callTool({ name: 'peeker', arguments: { port } });
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatch(/^Sandbox: +profile network, network full$/m);
    expect(reached).toBe(before + 1);
  });
});
