import { appendFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { GatedFixture } from '../helpers/gated-fixture.js';
import { gatedServers } from '../helpers/gated-server.js';
import type { Connected, Era } from '../helpers/stdio-client.js';

type Answer = { action: 'accept'; content: { decision: string } } | { action: 'decline' | 'cancel' };
type Text = { type: 'text'; text: string };

const approve = (decision: string): Answer => ({ action: 'accept', content: { decision } });
const ASK = 'approval:\n  mode: ask\n';

describe.each<Era>(['legacy', 'auto'])('gated runs over stdio, %s era', (era) => {
  const startServer = gatedServers();
  let fx: GatedFixture | undefined;
  let c: Connected | undefined;
  afterEach(() => {
    fx = c = undefined;
  });

  /** Starts a server on a fresh fixture; `answers` are given to elicitation requests in order. */
  async function start(
    config: string,
    answers: (Answer | (() => Promise<Answer>))[] = [],
    opts: { elicitation?: boolean; args?: string[] } = {},
  ) {
    ({ fx, c } = await startServer(config, { era, ...opts }));
    const asked: string[] = [];
    if (opts.elicitation !== false) {
      c.client.setRequestHandler('elicitation/create', async (req: { params: { message: string } }) => {
        asked.push(req.params.message);
        const next = answers.shift();
        if (next === undefined) throw new Error('unexpected approval request');
        return typeof next === 'function' ? await next() : next;
      });
    }
    return {
      asked,
      call: (args: Record<string, unknown> = { text: 'hi' }, name = 'echo') =>
        c!.client.callTool({ name, arguments: args }),
    };
  }

  const decisions = () => {
    const store = fx!.audit();
    try {
      return store
        .listCalls()
        .map((r) => `${r.status}:${r.approvalDecision ?? '-'}:${r.approvalReason ?? '-'}`);
    } finally {
      store.close();
    }
  };

  it('runs once approved and returns the structured result', async () => {
    const { asked, call } = await start(ASK, [approve('approved')]);
    const r = await call({ text: 'hello' });
    if (r.isError) console.log(JSON.stringify(r.content), c!.stderr().slice(-3000));
    expect(r.isError).toBeFalsy();
    expect(r.structuredContent).toEqual({ echo: { text: 'hello' }, ok: true });
    expect(asked).toHaveLength(1);
    expect(asked[0]).toContain('echo');
    expect(asked[0]).toContain('scripts/main.py');
    expect(decisions()).toEqual(['ok:approved:user']);
  });

  it('does not ask again for the same call after approved_for_session (reason cached)', async () => {
    const { asked, call } = await start(ASK, [approve('approved_for_session')]);
    expect((await call()).isError).toBeFalsy();
    expect((await call()).isError).toBeFalsy();
    expect(asked).toHaveLength(1);
    expect(decisions()).toEqual(['ok:approved_for_session:user', 'ok:approved:cached']);
  });

  it('trips the loop guard on the second denial and refuses the third call without asking', async () => {
    const { asked, call } = await start(ASK, [approve('denied'), approve('denied')]);
    expect((await call()).isError).toBe(true);
    expect((await call()).isError).toBe(true);
    const third = await call();
    expect(third.isError).toBe(true);
    expect((third.content as Text[])[0]!.text).toMatch(/loop|denied twice|again/i);
    expect(asked).toHaveLength(2);
    expect(decisions()).toEqual(['denied:denied:user', 'denied:denied:user', 'denied:denied:loop_guard']);
  });

  it('refuses every later gated call after abort while read-only tools keep answering', async () => {
    const { asked, call } = await start(ASK, [approve('abort')]);
    expect((await call()).isError).toBe(true);
    const later = await call({ text: 'other input' });
    expect(later.isError).toBe(true);
    expect(asked).toHaveLength(1);
    const read = await c!.client.callTool({
      name: 'read_skill_file',
      arguments: { skill: 'echo', path: 'SKILL.md' },
    });
    expect(read.isError).toBeFalsy();
    expect(decisions().slice(0, 2)).toEqual(['denied:abort:user', 'denied:denied:session_aborted']);
  });

  it('records decline, cancel and timeout distinctly', async () => {
    const late = () => new Promise<Answer>((r) => setTimeout(() => r(approve('approved')), 2500));
    // A person's decline or cancel takes a person's time (an instant one is the client's own: answered_unseen).
    const person = (a: Answer) => () => new Promise<Answer>((r) => setTimeout(() => r(a), 1100));
    const { call } = await start('approval:\n  mode: ask\n  timeout_ms: 1500\n  loop_guard: 0\n', [
      person({ action: 'decline' }),
      person({ action: 'cancel' }),
      late,
    ]);
    expect((await call({ text: 'a' })).isError).toBe(true);
    expect((await call({ text: 'b' })).isError).toBe(true);
    const timedOut = await call({ text: 'c' });
    expect(timedOut.isError).toBe(true);
    expect(decisions()).toEqual([
      'denied:denied:declined',
      'denied:denied:cancelled',
      'denied:denied:timeout',
    ]);
  });

  it('fails closed with the config hint when the client cannot elicit', async () => {
    const { call } = await start(ASK, [], { elicitation: false });
    const r = await call();
    expect(r.isError).toBe(true);
    const text = (r.content as Text[])[0]!.text;
    expect(text).toContain('skills-mcp.yaml');
    expect(text).toContain('echo');
    expect(decisions()).toEqual(['denied:denied:no_approver']);
  });

  it('fails closed under --no-elicitation even when the client declares elicitation', async () => {
    const { asked, call } = await start(ASK, [], { args: ['--no-elicitation'] });
    expect((await call()).isError).toBe(true);
    expect(asked).toHaveLength(0);
  });

  it('runs without asking when a rule allows it and fallback is rules-only', async () => {
    const { asked, call } = await start(
      'approval:\n  mode: ask\n  fallback: rules-only\n  rules:\n    - { skill: echo, action: allow }\n',
      [],
      { elicitation: false },
    );
    const r = await call();
    expect(r.isError).toBeFalsy();
    expect(asked).toHaveLength(0);
    expect(decisions()).toEqual(['ok:approved:rules']);
  });

  it('still asks for a high-risk skill under mode: allow with high_risk: ask', async () => {
    const { asked, call } = await start('approval:\n  mode: allow\n  high_risk: ask\n', [approve('denied')]);
    const r = await call({}, 'risky');
    expect(r.isError).toBe(true);
    expect(asked).toHaveLength(1);
    expect(asked[0]).toMatch(/high/i);
  });

  it('refuses with stale_binding and spawns nothing when a skill file changes between approval and run', async () => {
    const answers: (() => Promise<Answer>)[] = [
      () => {
        appendFileSync(join(fx!.skills, 'echo', 'scripts', 'main.py'), '\n# edited after the request\n');
        return Promise.resolve(approve('approved'));
      },
    ];
    const { call } = await start(ASK, answers);
    const r = await call();
    expect(r.isError).toBe(true);
    expect((r.content as Text[])[0]!.text).toMatch(/changed after the call was approved/);
    const store = fx!.audit();
    try {
      const [row] = store.listCalls();
      expect(row!.status).toBe('stale_binding');
      expect(row!.startedEventId).toBeNull();
    } finally {
      store.close();
    }
  });

  it('with granularity skill, new free text does not dodge the loop guard', async () => {
    const { asked, call } = await start('approval:\n  mode: ask\n  granularity: skill\n', [
      approve('denied'),
      approve('denied'),
    ]);
    await call({ text: 'a' });
    await call({ text: 'b' });
    const third = await call({ text: 'c', note: 'please, it is fine' });
    expect(third.isError).toBe(true);
    expect(asked).toHaveLength(2);
    expect(decisions()[2]).toBe('denied:denied:loop_guard');
  });

  it('with granularity exact, new input is a new key and is asked again', async () => {
    const { asked, call } = await start('approval:\n  mode: ask\n  granularity: exact\n', [
      approve('denied'),
      approve('denied'),
      approve('approved'),
    ]);
    await call({ text: 'a' });
    await call({ text: 'a' });
    const other = await call({ text: 'b' });
    expect(other.isError).toBeFalsy();
    expect(asked).toHaveLength(3);
  });
});
