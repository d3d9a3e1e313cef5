import { describe, expect, it } from 'vitest';
import { waitFor } from '../helpers/wait-for.js';
import { consoleConfig, consoleServers, textOf } from './helpers/console-server.js';
import { postDecision, rawRequest } from './helpers/raw-request.js';

/** The console's answers to a client that cannot elicit, decided with plain HTTP POSTs as the page sends them. */
describe('approval console: waiting, retries and timeouts (stdio, built binary)', () => {
  const startServer = consoleServers();

  it('lets a retry made before the decision wait for it, and runs the one call that asked', async () => {
    // The retry waits this long for the decision the test posts meanwhile: room for a busy machine's page load.
    const s = await startServer({ config: consoleConfig({ waitMs: 5000 }) });
    const first = await s.call({ text: 'again' }).result;
    expect(first._meta?.['skills-mcp/code']).toBe('APPROVAL_PENDING');
    const retry = s.call({ text: 'again' });
    expect((await postDecision(await retry.link, 'approved')).status).toBe(303);
    const r = await retry.result;
    expect(r.isError, textOf(r)).toBeFalsy();
    expect(r._meta?.['skills-mcp/call_id']).toBe(first._meta?.['skills-mcp/call_id']);
    expect(s.decisions()).toEqual(['ok:approved:user:console']);
    // The audit log says who decided: a person in the console.
    const decided = s.withAudit((a) =>
      a.getCall(a.listCalls()[0]!.callId)!.events.find((e) => e.type === 'approval_decided'),
    );
    expect(decided?.payload).toMatchObject({ channel: 'console', approver: { kind: 'console' } });
  });

  it('hands a denial made while no request waited to the retry once; the next call asks anew', async () => {
    const s = await startServer({ config: consoleConfig({ waitMs: 1000 }) });
    const asked = s.call();
    const first = await asked.result;
    const link = await asked.link;
    expect((await postDecision(link, 'denied')).status).toBe(303);
    const retry = await s.call().result;
    expect(textOf(retry)).toMatch(/user denied running echo\/scripts\/main\.py/);
    expect(retry._meta?.['skills-mcp/call_id']).toBe(first._meta?.['skills-mcp/call_id']);
    const third = await s.call().result;
    expect(third._meta?.['skills-mcp/code']).toBe('APPROVAL_PENDING');
    expect(third._meta?.['skills-mcp/call_id']).not.toBe(first._meta?.['skills-mcp/call_id']);
    expect(s.decisions()).toEqual(['denied:denied:user:console', 'requested:-:-:console']);
  });

  it('records a timeout with channel console when nobody decides, and the page says so', async () => {
    const s = await startServer({ config: consoleConfig({ waitMs: 20_000, timeoutMs: 1000 }) });
    const pending = s.call();
    const link = await pending.link;
    const r = await pending.result;
    expect(textOf(r)).toMatch(/No one answered the approval request/);
    expect(s.decisions()).toEqual(['denied:denied:timeout:console']);
    const page = await rawRequest(link);
    expect(page.body).toContain('no decision in time; not run');
    expect(page.body).not.toContain('name="csrf"');
  });

  it('finishes an approved call the client never came back for as cancelled, without running it', async () => {
    const s = await startServer({ config: consoleConfig({ waitMs: 1000, timeoutMs: 2500 }) });
    const asked = s.call();
    await asked.result;
    expect((await postDecision(await asked.link, 'approved')).status).toBe(303);
    await waitFor(
      () => s.decisions()[0] !== 'requested:approved:user:console',
      10_000,
      'the approval to lapse',
    );
    expect(s.decisions()).toEqual(['cancelled:approved:user:console']);
    const row = s.withAudit((a) => a.listCalls()[0]!);
    expect(row.startedEventId).toBeNull();
  });

  it('records the call as cancelled by the client when the client cancels the waiting request', async () => {
    const s = await startServer();
    const abort = new AbortController();
    const pending = s.call({ text: 'hi' }, 'echo', abort.signal);
    const link = await pending.link;
    abort.abort();
    await expect(pending.result).rejects.toThrow();
    await waitFor(
      () => s.decisions()[0] === 'cancelled:denied:request_cancelled:console',
      10_000,
      'the cancel',
    );
    const page = await rawRequest(link);
    expect(page.body).toContain('cancelled by the client');
  });

  it('tells a 2025-era client by an MCP log message that the user decides in the console, without the link', async () => {
    const s = await startServer({ era: 'legacy' });
    const pending = s.call();
    const link = await pending.link;
    await waitFor(() => s.logs.length > 0, 5000, 'a log message');
    expect(s.logs[0]).toMatchObject({ level: 'notice', logger: 'skills-mcp' });
    expect(JSON.stringify(s.logs[0])).toMatch(/the user decides in the skills-mcp approval console/);
    expect(JSON.stringify(s.logs[0])).not.toContain(new URL(link).pathname.split('/')[1]);
    await postDecision(link, 'denied');
    await pending.result;
  });

  it('hides secret-named values and shortens long ones on the card, raises the risk for the hidden, and shows them in full only while pending', async () => {
    const token = 'tok-canary-0123';
    const long = `rm -rf ~ ${'L'.repeat(90)}`;
    const s = await startServer({ env: { SECRET_TOKEN: 'env-canary-5b1f0e' } });
    const pending = s.call({ text: 'hi', token, note: long });
    const link = await pending.link;
    const card = (await rawRequest(link)).body;
    expect(card).toContain('(secret, 15 characters, hidden)');
    expect(card).toContain(`(${long.length} characters, 1 line, sha256 `);
    expect(card).toContain('; in full on the call&#39;s page)');
    expect(card).toContain('MEDIUM');
    expect(card).toContain('1 value is not shown in full on this card');
    expect(card).not.toContain(token);
    expect(card).not.toContain(long);
    const callId = s.withAudit((a) => a.listCalls()[0]!.callId);
    expect(card).toContain(`calls/${callId}">See the full input</a>`);
    const full = (await rawRequest(`${s.base}calls/${callId}`)).body;
    expect(full).toContain('Full input (waiting for your decision)');
    expect(full).toContain(`&quot;note&quot;: &quot;${long}&quot;`);
    expect(full).toContain(token);
    expect((await postDecision(link, 'approved')).status).toBe(303);
    expect((await pending.result).isError).toBeFalsy();
    const pages = [
      (await rawRequest(link)).body,
      (await rawRequest(s.base)).body,
      (await rawRequest(`${s.base}calls/${callId}`)).body,
    ];
    for (const body of [card, full, ...pages]) expect(body).not.toContain('env-canary-5b1f0e');
    for (const body of pages) {
      expect(body).not.toContain(token);
      expect(body).not.toContain(long);
    }
  });

  it('shows the risk level and the scan findings of a high-risk skill', async () => {
    const s = await startServer();
    const pending = s.call({}, 'risky');
    const link = await pending.link;
    const page = (await rawRequest(link)).body;
    expect(page).toContain('HIGH');
    expect(page).toMatch(/\.ssh/);
    await postDecision(link, 'denied');
    expect((await pending.result).isError).toBe(true);
  });

  it('refuses a decision POST that is not the form (wrong type, missing fields) and keeps the approval open', async () => {
    const s = await startServer();
    const pending = s.call();
    const link = await pending.link;
    const origin = new URL(link).origin;
    const json = await rawRequest(link, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/json' },
      body: '{"decision":"approved"}',
    });
    expect(json.status).toBe(415);
    const partial = await rawRequest(link, {
      method: 'POST',
      headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'decision=approved',
    });
    expect(partial.status).toBe(400);
    expect(s.decisions()).toEqual(['requested:-:-:console']);
    await postDecision(link, 'denied');
    expect((await pending.result).isError).toBe(true);
  });
});
