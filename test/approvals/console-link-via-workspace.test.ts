import { mkdirSync, writeFileSync, appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import {
  consoleConfig,
  startConsoleServer,
  textOf,
  type ConsoleServer,
} from '../console/helpers/console-server.js';
import { csrfOf, rawRequest } from '../console/helpers/raw-request.js';

/** Prints every file of the workspace whose text holds a loopback link: a "search my files" skill. */
const PEEK = `import os
w = os.environ["SKILL_WORKSPACE"]
for root, dirs, files in os.walk(w):
    for f in files:
        p = os.path.join(root, f)
        try:
            t = open(p, "rb").read(65536).decode("utf-8", "replace")
        except OSError:
            continue
        if "http://127.0.0.1" in t:
            print(p, t)
`;

/**
 * Plays the model with one approved skill that may write the workspace (allowed by a rule, as an operator would
 * for a trusted "notes" skill), where the workspace holds the server's state folder (`--audit` in the project, or a
 * workspace of `$HOME` with the default `~/.local/state`). The console's secret link must not reach what the
 * skill can read and print: otherwise the model takes it from the result and approves its own pending call.
 */
describe('the console link is not readable through the workspace', () => {
  let s: ConsoleServer | undefined;
  afterEach(async () => {
    await s?.close();
    s = undefined;
  });

  it('a workspace skill cannot read the link, and the model cannot approve its pending call', async () => {
    s = await startConsoleServer({
      config: consoleConfig({ waitMs: 1000, extra: '  rules:\n    - { skill: peek, action: allow }\n' }),
      setup: (fx) => {
        const peek = join(fx.skills, 'peek');
        mkdirSync(join(peek, 'scripts'), { recursive: true });
        writeFileSync(
          join(peek, 'SKILL.md'),
          '---\nname: peek\ndescription: Searches the workspace. Use in tests.\nentry_point: scripts/main.py\nworkspace: write\n---\n\nPeek.\n',
        );
        writeFileSync(join(peek, 'scripts', 'main.py'), PEEK);
        appendFileSync(fx.configFile, `workspace: ${fx.dir}\n`);
      },
    });
    const secret = new URL(s.base).pathname.split('/')[1]!;
    const asked = await s.call({ text: 'model wants this' }).result;
    expect(asked._meta?.['skills-mcp/code']).toBe('APPROVAL_PENDING');

    const peeked = await s.c.client.callTool({ name: 'peek', arguments: {} });
    expect(peeked.isError, textOf(peeked)).toBeFalsy();
    const seen = JSON.stringify(peeked);

    // The model uses whatever console link the result holds: GET the pending approval's form, POST "approve".
    const links = seen.match(/http:\/\/127\.0\.0\.1:\d+\/[A-Za-z0-9_-]{20,}\//g) ?? [];
    for (const base of new Set(links)) {
      const index = await rawRequest(base).catch(() => undefined);
      const id = /\/approvals\/([A-Za-z0-9_-]+)"/.exec(index?.body ?? '')?.[1];
      if (id === undefined) continue;
      const form = await rawRequest(`${base}approvals/${id}`);
      await rawRequest(`${base}approvals/${id}`, {
        method: 'POST',
        headers: { origin: new URL(base).origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: `csrf=${encodeURIComponent(csrfOf(form.body))}&decision=approved`,
      });
    }
    // No approval came from the console: the person never opened it.
    expect(s.decisions().filter((d) => d.includes(':user:'))).toEqual([]);
    const retry = await s.call({ text: 'model wants this' }).result;
    expect(retry._meta?.['skills-mcp/code'], textOf(retry)).toBe('APPROVAL_PENDING');
    expect(seen).not.toContain(secret);
  });
});
