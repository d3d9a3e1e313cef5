import { describe, expect, it } from 'vitest';
import { summarizeInput } from '../../src/gate/approval-key.js';
import type { ApprovalView } from '../../src/gate/approval-message.js';
import { approvalRequest, approvalSchema, interpretAnswer } from '../../src/gate/approval-request.js';

const secrets = {
  api_token: 'canary-one',
  password: 'hunter2',
  AuthHeader: 'Basic canary-two',
  session_cookie: 'canary-three',
  awsCredential: 'canary-four',
  my_key: 'canary-five',
  note: 'sk-live-abcdefghijklmnop',
  gh: 'ghp_0123456789abcdefghij',
  jwt: 'eyJhbGciOiJIUzI1NiJ9',
  blob: 'Zm9vYmFyYmF6cXV4MTIzNDU2Nzg5MA',
  url: 'https://bob:s3cr3tpw@example.com/x',
};
const longText = 'Please summarise the attached quarterly report and be thorough about it.';
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
  argv: ['--out', 'form.pdf'],
  input,
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
      'tags: (list of 2)',
      'opts: (object with 1 keys)',
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

  it('never shows a long value', () => {
    const { message } = approvalRequest(view());
    expect(message).not.toContain(longText.slice(0, 20));
    expect(message).toContain(`body: (hidden: ${longText.length} characters)`);
  });

  it.each(Object.entries(secrets))('never shows a secret-looking value (%s)', (k, v) => {
    const one = { [k]: v, other: 'fine' };
    const { message } = approvalRequest(view({ input: one, inputSummary: summarizeInput(one) }));
    expect(message).toContain(`${k}: (hidden`);
    expect(message).not.toContain(v);
    expect(message).toContain('other: "fine"');
  });

  it('lists at most 8 keys', () => {
    const { message } = approvalRequest(view({ input: secrets, inputSummary: summarizeInput(secrets) }));
    expect(message).toContain('11 keys');
    expect(message).toContain('and 3 more keys');
    for (const v of Object.values(secrets)) expect(message).not.toContain(v);
  });

  it('hides secret-looking and long argv items', () => {
    const argv = [
      '--token',
      'abc',
      '--api-key=xyz',
      '--out',
      'ok.txt',
      'x'.repeat(100),
      'ghp_0123456789abcdefghij',
    ];
    const { message } = approvalRequest(view({ argv }));
    expect(message).toContain(
      '--token (hidden) --api-key=(hidden) --out ok.txt (100 characters, hidden) (hidden)',
    );
    for (const v of ['abc', 'xyz', 'xxxxxxxxxx', 'ghp_']) expect(message).not.toContain(v);
  });

  it('escapes control and bidi characters so values cannot spoof the screen', () => {
    const tricky = { a: 'ok\u202Eevil', b: 'x\ny' };
    const { message } = approvalRequest(
      view({ input: tricky, inputSummary: summarizeInput(tricky), argv: ['a\u200Bb'] }),
    );
    expect(message).not.toMatch(/[\u202E\u200B]/);
    expect(message).toContain('a: "ok\\u202eevil"');
    expect(message).toContain('b: "x\\ny"');
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
