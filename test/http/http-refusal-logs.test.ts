import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/log.js';
import { createThrottledWarn } from '../../src/transport/http/throttled-warn.js';
import { waitFor } from '../helpers/wait-for.js';
import { MCP_HEADERS, rawRequest } from './helpers/raw-request.js';
import { spawnedHttpServer } from './helpers/start-http.js';

const TOKEN = 'refusal-logs-token-0123456789abcdef';
const LIST = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} });

const linesWith = (text: string, msg: string) => text.split('\n').filter((l) => l.includes(`"msg":"${msg}"`));

describe('refused requests in the server log', () => {
  const { url, server } = spawnedHttpServer({ SKILLS_MCP_TOKEN: TOKEN });

  it('cost one line per kind while a client repeats them, and each request is still refused', async () => {
    const wrongToken = await Promise.all(
      Array.from({ length: 30 }, () =>
        rawRequest(url(), {
          method: 'POST',
          headers: { ...MCP_HEADERS, authorization: 'Bearer not-the-token-0123456789' },
          body: LIST,
        }),
      ),
    );
    expect(new Set(wrongToken.map((r) => r.status))).toEqual(new Set([401]));
    const foreignHost = await Promise.all(
      Array.from({ length: 30 }, () =>
        rawRequest(url(), {
          method: 'POST',
          headers: { ...MCP_HEADERS, host: 'evil.example', authorization: `Bearer ${TOKEN}` },
          body: LIST,
        }),
      ),
    );
    expect(new Set(foreignHost.map((r) => r.status))).toEqual(new Set([403]));
    // The server logs before it answers, but its stderr reaches this process on its own pipe: wait for the lines.
    const log = await waitFor(
      () => {
        const text = server().stderr();
        const both = ['request refused: token', 'request refused: Host or Origin not allowed'];
        return both.every((m) => linesWith(text, m).length > 0) ? text : undefined;
      },
      10_000,
      'both refusal lines in the server log',
    );
    expect(linesWith(log, 'request refused: token')).toHaveLength(1);
    expect(linesWith(log, 'request refused: Host or Origin not allowed')).toHaveLength(1);
    expect(log).not.toContain('not-the-token');
  });
});

describe('a throttled warning', () => {
  it('is logged once per window, and the next one after it says how many were left out', () => {
    const lines: string[] = [];
    const sink = { write: (l: string) => void lines.push(l) } as unknown as NodeJS.WritableStream;
    const log = createLogger('warn', sink);
    let t = 0;
    const warn = createThrottledWarn(log, 1000, () => t);
    for (let i = 0; i < 5; i++) warn({ peer: `p${i}` }, 'refused');
    t = 999;
    warn({ peer: 'late' }, 'refused');
    warn({}, 'another kind');
    t = 1000;
    warn({ peer: 'next' }, 'refused');
    const got = lines.map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(got.map((g) => [g.msg, g.peer, g.suppressed])).toEqual([
      ['refused', 'p0', undefined],
      ['another kind', undefined, undefined],
      ['refused', 'next', 5],
    ]);
  });
});
