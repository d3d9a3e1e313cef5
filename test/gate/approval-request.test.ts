import { describe, expect, it } from 'vitest';
import { summarizeInput } from '../../src/gate/approval-key.js';
import type { ApprovalView } from '../../src/approvals/approval-view.js';
import { approvalRequest, approvalSchema, interpretAnswer } from '../../src/approvals/approval-request.js';
import { DEFAULT_SECRET_NAMES } from '../../src/config/approval-schema.js';

const secrets = {
  api_token: 'canary-one',
  password: 'hunter2',
  Authorization: 'Basic canary-two',
  cookie: 'canary-three',
  credentials: 'canary-four',
  API_KEY: 'canary-five',
  client_secret: 'canary-six',
};
const longText = 'Please summarise the attached quarterly report and be thorough about it, page by page.';
const input = {
  title: 'Q3 report',
  pages: 12,
  draft: false,
  body: longText,
  tags: ['a', 'b'],
  opts: { x: 1 },
};

const view = (over: Partial<ApprovalView> = {}): ApprovalView => ({
  skill: 'pdf',
  script: 'scripts/fill_form.py',
  bundleSha256: '2cf24dba5fb0a30e26e83b2ac5b9e29e1b161e5c1fa7425e73043362938b9824',
  runner: 'python3',
  callId: 'c0ffee00-1111-2222-3333-444455556666',
  argv: ['--out', 'form.pdf'],
  input,
  secretNames: DEFAULT_SECRET_NAMES,
  fullInput: 'see the console',
  inputSummary: summarizeInput(input),
  sandbox: {
    profile: 'default',
    enforced: true,
    network: 'none',
    writablePaths: ['/tmp/skills-mcp/calls/c1/out'],
  },
  risk: {
    level: 'high',
    code: 'pipe-to-shell',
    findings: [
      {
        rule: 'pipe-to-shell',
        level: 'high',
        message: 'pipes a download into an interpreter: curl x | sh',
        path: 'scripts/i.sh',
        line: 4,
      },
      { rule: 'requests-network', level: 'medium', message: 'asks for network access' },
    ],
  },
  policy: { decision: 'ask', rule: 'high_risk: ask' },
  ...over,
});

describe('approvalRequest', () => {
  it('shows one screen with everything a person needs to judge', () => {
    const { message } = approvalRequest(view());
    for (const part of [
      'pdf',
      'scripts/fill_form.py',
      'bundle 2cf24dba5fb0)',
      'python3 scripts/fill_form.py --out form.pdf',
      '6 keys, ',
      'title: "Q3 report"',
      'pages: 12',
      'draft: false',
      'tags: ["a","b"]',
      'opts: {"x":1}',
      'profile default, network none',
      '/tmp/skills-mcp/calls/c1/out',
      'HIGH (pipe-to-shell)',
      'scripts/i.sh:4 pipes a download',
      'asks for network access',
      'ask, by high_risk: ask',
    ]) {
      expect(message).toContain(part);
    }
    expect(message).not.toContain('2cf24dba5fb0a');
    expect(message.split('\n').length).toBeLessThanOrEqual(30);
  });

  it('shortens a long value on its line, shows it in full below, and keeps the risk', () => {
    const plain = { note: longText };
    const { message } = approvalRequest(
      view({
        input: plain,
        inputSummary: summarizeInput(plain),
        risk: { level: 'low', code: 'no-findings', findings: [] },
      }),
    );
    expect(message).toMatch(
      new RegExp(
        `note: "Please summarise the .*… \\(${longText.length} characters, 1 line, sha256 [0-9a-f]{12}; in full below\\)`,
      ),
    );
    expect(message).toContain(`\n    | ${longText}\n    (no line break at the end)`);
    expect(message).toContain('Risk:    LOW');
  });

  it('raises the risk for a value too long for the form, and says where to see it', () => {
    const huge = { note: 'y'.repeat(20_000) };
    const { message } = approvalRequest(
      view({
        input: huge,
        inputSummary: summarizeInput(huge),
        risk: { level: 'low', code: 'no-findings', findings: [] },
      }),
    );
    expect(message).toContain('20000 characters, 1 line, sha256 ');
    expect(message).toContain('; too long for this form)');
    expect(message).not.toContain('y'.repeat(100));
    expect(message).toContain('Risk:    MEDIUM (input-not-shown)');
    expect(message).toContain(
      '1 value is not shown in full on this form (secret-named, or too long for it): see the console',
    );
  });

  it.each(Object.entries(secrets))('hides the value of a configured secret name (%s) and says so', (k, v) => {
    const one = { [k]: v, other: 'fine' };
    const { message } = approvalRequest(view({ input: one, inputSummary: summarizeInput(one) }));
    expect(message).toContain(`${k}: (secret, ${v.length} characters, hidden)`);
    expect(message).not.toContain(v);
    expect(message).toContain('other: "fine"');
    expect(message).toContain('1 value is not shown in full');
  });

  it('shows names that merely contain a secret word, and values that merely look like tokens', () => {
    const near = {
      keywords: 'rm -rf ~',
      passport: 'X1',
      monkey: 'sk-live-abcdef',
      author: 'ghp_0123456789abcdef',
    };
    const { message } = approvalRequest(
      view({
        input: near,
        inputSummary: summarizeInput(near),
        risk: { level: 'low', code: 'no-findings', findings: [] },
      }),
    );
    for (const [k, v] of Object.entries(near)) expect(message).toContain(`${k}: "${v}"`);
    expect(message).toContain('Risk:    LOW');
  });

  it("decides secret names by the operator's list alone", () => {
    const one = { keywords: 'pdf', password: 'hunter2' };
    const { message } = approvalRequest(
      view({ input: one, inputSummary: summarizeInput(one), secretNames: ['keywords'] }),
    );
    expect(message).toContain('keywords: (secret, 3 characters, hidden)');
    expect(message).toContain('password: "hunter2"');
  });

  it('shows keys past the first 8 below the facts', () => {
    const many = Object.fromEntries(Array.from({ length: 11 }, (_, i) => [`k${i + 10}`, i]));
    const { message } = approvalRequest(
      view({
        input: many,
        inputSummary: summarizeInput(many),
        risk: { level: 'low', code: 'no-findings', findings: [] },
      }),
    );
    expect(message).toContain('11 keys');
    expect(message).toContain('and 3 more keys');
    expect(message).toContain('  input keys 9 to 11 (3 more):\n    | k18: 8\n    | k19: 9\n    | k20: 10');
    expect(message).toContain('Risk:    LOW');
  });

  it('summarizes a nested value holding a secret name, or a long one, instead of dropping it', () => {
    const nested = { db: { user: 'u', password: 'hunter2' }, rows: Array.from({ length: 40 }, (_, i) => i) };
    const { message } = approvalRequest(view({ input: nested, inputSummary: summarizeInput(nested) }));
    expect(message).toContain('db: (object with 2 keys, holds secret "password", hidden)');
    expect(message).toMatch(
      /rows: \[0,1,2,.*… \(list of 40, \d+ characters as JSON, sha256 [0-9a-f]{12}; in full below\)/,
    );
    expect(message).toContain('    |   39\n    | ]');
    expect(message).not.toContain('hunter2');
    expect(message).toContain('1 value is not shown in full');
  });

  it('shows an input that is not an object as one value, and counts a clipped key name', () => {
    const list = ['a', 'b'];
    expect(approvalRequest(view({ input: list, inputSummary: summarizeInput(list) })).message).toContain(
      '  (input): ["a","b"]',
    );
    const longKey = { [`k${'e'.repeat(90)}`]: 1 };
    const { message } = approvalRequest(view({ input: longKey, inputSummary: summarizeInput(longKey) }));
    expect(message).toContain('1 value is not shown in full');
  });

  it('shows what follows a flag unless the flag is a configured secret name', () => {
    const argv = [
      '--token',
      's3cr3t',
      '--api-key=xyz',
      '--out',
      'ok.txt',
      'x'.repeat(100),
      'ghp_0123456789abcdefghij',
    ];
    const { message } = approvalRequest(view({ argv, input: {}, inputSummary: summarizeInput({}) }));
    expect(message).toContain(
      '--token (secret, 6 characters, hidden) --api-key=(secret, 3 characters, hidden) --out ok.txt "xxxx',
    );
    expect(message).toContain('… (100 characters, 1 line, sha256 ');
    expect(message).toContain('; in full below) ghp_0123456789abcdefghij');
    expect(message).toContain(`  argument 6 (100 characters, 1 line, sha256 `);
    expect(message).toContain('2 values are not shown in full');
    for (const v of ['s3cr3t', 'xyz']) expect(message).not.toContain(v);
  });

  it('escapes control and bidi characters so values cannot spoof the screen', () => {
    const tricky = { a: 'ok\u202Eevil', b: 'x\ny' };
    const { message } = approvalRequest(
      view({ input: tricky, inputSummary: summarizeInput(tricky), argv: ['a\u200Bb'] }),
    );
    expect(message).not.toMatch(/[\u202E\u200B]/);
    expect(message).toContain('a: "ok\\u202Eevil"');
    expect(message).toContain('b: "x\\ny"');
  });

  it('escapes what draws as nothing, so a value shown as "ok" is exactly "ok"', () => {
    const hidden = { a: 'ok\u{E0041}\u{E0042}', b: 'ok\u3164', c: 'ok\uFE0F' };
    const { message } = approvalRequest(view({ input: hidden, inputSummary: summarizeInput(hidden) }));
    expect(message).toContain('a: "ok\\u{E0041}\\u{E0042}"');
    expect(message).toContain('b: "ok\\u3164"');
    expect(message).toContain('c: "ok\\uFE0F"');
    expect(message).not.toMatch(/\u3164|\uFE0F|\u{E0041}/u);
  });

  it('says when the sandbox is off and when nothing is writable', () => {
    const { message } = approvalRequest(
      view({ sandbox: { profile: 'none', enforced: false, network: 'full', writablePaths: [] } }),
    );
    expect(message).toContain('OFF (not sandboxed), network full');
    expect(message).toContain('nothing');
  });

  it('asks for one required titled decision defaulting to denied', () => {
    expect(approvalSchema()).toEqual({
      type: 'object',
      properties: {
        decision: {
          type: 'string',
          title: 'Decision',
          description: expect.any(String),
          oneOf: [
            { const: 'approved', title: 'Approve once' },
            { const: 'approved_for_session', title: 'Approve for this session' },
            { const: 'denied', title: 'Deny' },
            { const: 'abort', title: 'Deny and stop all skill runs in this session' },
          ],
          default: 'denied',
        },
      },
      required: ['decision'],
    });
  });
});

describe('interpretAnswer', () => {
  it.each([
    [{ action: 'accept', content: { decision: 'approved' } }, 'approved', 'user'],
    [{ action: 'accept', content: { decision: 'approved_for_session' } }, 'approved_for_session', 'user'],
    [{ action: 'accept', content: { decision: 'denied' } }, 'denied', 'user'],
    [{ action: 'accept', content: { decision: 'abort' } }, 'abort', 'user'],
    [{ action: 'accept', content: { decision: 'yes please' } }, 'denied', 'invalid_response'],
    [{ action: 'accept', content: {} }, 'denied', 'invalid_response'],
    [{ action: 'accept' }, 'denied', 'invalid_response'],
    [{ action: 'accept', content: 'approved' }, 'denied', 'invalid_response'],
    [{ action: 'decline' }, 'denied', 'declined'],
    [{ action: 'cancel' }, 'denied', 'cancelled'],
    [{ action: 'timeout' }, 'denied', 'timeout'],
    [{ action: 'error', error: new Error('boom') }, 'denied', 'elicitation_error'],
    [{ action: 'approve' }, 'denied', 'invalid_response'],
  ])('%o → %s (%s)', (answer, decision, reason) => {
    expect(interpretAnswer(answer)).toEqual({ decision, reason });
  });
});
