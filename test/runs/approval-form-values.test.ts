import { describe, expect, it } from 'vitest';
import type { GatedFixture } from '../helpers/gated-fixture.js';
import { gatedServers } from '../helpers/gated-server.js';
import { runCli } from '../helpers/run-cli.js';

/** What the person reads in the approval form, as the client receives it from the built server. */
describe('the approval form hides only configured secret names, and says what it does not show', () => {
  const start = gatedServers();
  let fx: GatedFixture | undefined;

  async function askedMessage(
    config: string,
    args: string[],
    input: unknown,
    whileAsked: () => Promise<void> = () => Promise.resolve(),
  ): Promise<string> {
    const s = await start(config);
    fx = s.fx;
    const { c } = s;
    const asked: string[] = [];
    c.client.setRequestHandler('elicitation/create', async (req: { params: { message: string } }) => {
      asked.push(req.params.message);
      await whileAsked();
      return { action: 'accept', content: { decision: 'denied' } };
    });
    await c.client.callTool({
      name: 'run_skill_script',
      arguments: { skill: 'echo', script: 'scripts/main.py', args, input },
    });
    expect(asked).toHaveLength(1);
    return asked[0]!;
  }

  it('shows a value under a name that merely contains "key" or "pass", and marks a real secret and a long value', async () => {
    const long = `rm -rf ~ ${'x'.repeat(100)}`;
    const message = await askedMessage(
      'approval:\n  mode: ask\n',
      ['--keywords', 'rm -rf ~', '--password', 'rm -rf ~'],
      { keywords: 'rm -rf ~', passport: 'rm -rf ~', note: long },
    );
    expect(message).toContain('--keywords "rm -rf ~" --password (secret, 8 characters, hidden)');
    expect(message).toContain('keywords: "rm -rf ~"');
    expect(message).toContain('passport: "rm -rf ~"');
    expect(message).toContain(`note: "rm -rf ~ xxx`);
    expect(message).toContain(`(${long.length} characters, 1 line, sha256 `);
    expect(message).toContain(`\n    | ${long}\n`);
    expect(message).toMatch(/^Risk: +MEDIUM \(input-not-shown\)$/m);
    expect(message).toContain('1 value is not shown in full');
    expect(message).toContain('approval.console: true');
    expect(message.indexOf('Risk:')).toBeLessThan(message.indexOf('Command:'));
  });

  it('hides the names the operator lists, and only those', async () => {
    const message = await askedMessage(
      'approval:\n  mode: ask\n  secret_names: [keywords]\n',
      ['--keywords', 'pdf', '--password', 'hunter2'],
      {},
    );
    expect(message).toContain('--keywords (secret, 3 characters, hidden) --password hunter2');
  });

  it('points the form to the console, whose page of the waiting call shows the whole input', async () => {
    // Too long for the form: only the console's page of the call shows it in full.
    const long = `rm -rf ~ ${'y'.repeat(10_000)}`;
    let page = '';
    let index = '';
    let callId = '';
    const message = await askedMessage(
      'approval:\n  mode: ask\n  console: true\n  console_open_browser: false\n',
      [],
      { note: long },
      async () => {
        const link = runCli(['console', '--audit', fx!.auditPath]).stdout.trim();
        const store = fx!.audit();
        callId = store.listCalls()[0]!.callId;
        store.close();
        page = await (await fetch(`${link}calls/${callId}`)).text();
        index = await (await fetch(link)).text();
      },
    );
    // The runner's call ids grow with time: their first characters are the time, so both show the random end.
    expect(callId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(message).toContain(`the approval console's page of call ${callId.slice(-8)} shows them in full`);
    expect(page).toContain(`<title>Call ${callId.slice(-8)}`);
    expect(index).toContain(`>${callId.slice(-8)}</a>`);
    expect(message).not.toContain(long);
    expect(page).toContain('Full input (waiting for your decision)');
    expect(page).toContain(long);
  });
});
