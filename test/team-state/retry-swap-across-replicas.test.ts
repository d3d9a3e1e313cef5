import { symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Client } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ExportedEvent } from '../../src/audit/parse-event-row.js';
import { writeTestSkill } from '../helpers/gated-fixture.js';
import { startTeam, textOf, tool, type Raw, type Team } from './helpers/team.js';

// The model plays both sides of a 2026-07-28 approval: it asks a call on replica A, the person approves it once for
// what the form showed, and the model sends the retry to replica B with something else. B re-prepares the call from
// the retry's own request; with `granularity: skill` the approval key leaves the arguments out, and at any
// granularity it leaves out the name the script was asked by (which picks the runner). Such a retry runs nothing.
let team: Team;
let a: Client;
let b: Client;

// Runs as python3 (by its `.py` name) and as bash (by its `.sh` link): each says which one ran it.
const POLYGLOT = `"""":
echo '{"ran": "bash"}'
exit 0
"""
import json, sys
print(json.dumps({"ran": "python3", "argv": sys.argv[1:]}))
`;

const run = (c: Client, call: { script: string; args?: string[] }, retry?: string): Promise<Raw> =>
  tool(
    c,
    'run_skill_script',
    { skill: 'argv', input: {}, ...call },
    retry === undefined ? undefined : { state: retry },
  );

/** The call id of the newest approval asked. */
const lastAsked = async (requestState: string | undefined) => {
  expect(requestState).toBeTypeOf('string');
  return (await team.events()).findLast((e) => e.type === 'approval_requested')!.call_id!;
};
/** The result's text without white space (the output comes back pretty-printed). */
const flat = (r: Raw) => textOf(r).replace(/\s+/g, '');
const ofCall = (ev: ExportedEvent[], callId: string) =>
  ev.filter((e) => e.call_id === callId).map((e) => e.type);

beforeAll(async () => {
  team = await startTeam('approval:\n  mode: ask\n  granularity: skill\n');
  const dir = writeTestSkill(team.fx.skills, 'argv', {
    description: 'Prints its arguments and which runner ran it. Use in tests.',
    script: POLYGLOT,
  });
  writeFileSync(join(dir, 'scripts', 'tool.py'), POLYGLOT);
  symlinkSync('tool.py', join(dir, 'scripts', 'tool.sh'));
  [a, b] = (await Promise.all([team.start('a'), team.start('b')])).map((r) => r.c) as [Client, Client];
}, 60_000);
afterAll(() => team?.cleanup());

describe('a retry on another replica runs only the call the person approved (PostgreSQL log)', () => {
  it('refuses on B a retry whose args differ from those approved on A, and runs nothing', async () => {
    const asked = await run(a, { script: 'scripts/tool.py', args: ['--shown', 'A'] });
    const callId = await lastAsked(asked.requestState);
    const swapped = await run(
      b,
      { script: 'scripts/tool.py', args: ['--not-shown', 'B'] },
      asked.requestState,
    );
    expect(swapped.isError, textOf(swapped)).toBe(true);
    expect(swapped._meta?.['skills-mcp/code']).toBe('RETRY_MISMATCH');
    expect(textOf(swapped)).not.toContain('--not-shown');
    expect(ofCall(await team.events(), callId)).toEqual([
      'tool_call_requested',
      'policy_decided',
      'approval_requested',
    ]);
    // The genuine retry, on B, still runs what was shown.
    const right = await run(b, { script: 'scripts/tool.py', args: ['--shown', 'A'] }, asked.requestState);
    expect(right.isError, textOf(right)).toBeFalsy();
    expect(flat(right)).toContain('"argv":["--shown","A"]');
    expect(ofCall(await team.events(), callId).filter((t) => t === 'tool_call_started')).toHaveLength(1);
  });

  it('refuses on B a retry naming the script by a link with another runner, and runs nothing', async () => {
    const asked = await run(a, { script: 'scripts/tool.py' });
    const callId = await lastAsked(asked.requestState);
    const swapped = await run(b, { script: 'scripts/tool.sh' }, asked.requestState);
    expect(swapped.isError, textOf(swapped)).toBe(true);
    expect(swapped._meta?.['skills-mcp/code']).toBe('RETRY_MISMATCH');
    expect(flat(swapped)).not.toContain('"ran":"bash"');
    expect(ofCall(await team.events(), callId)).not.toContain('tool_call_started');
    const right = await run(b, { script: 'scripts/tool.py' }, asked.requestState);
    expect(right.isError, textOf(right)).toBeFalsy();
    expect(flat(right)).toContain('"ran":"python3"');
  });

  it('runs on A itself the same call approved there, and refuses there the swapped one', async () => {
    const asked = await run(a, { script: 'scripts/tool.py', args: ['A'] });
    const swapped = await run(a, { script: 'scripts/tool.py', args: ['B'] }, asked.requestState);
    expect(swapped._meta?.['skills-mcp/code']).toBe('RETRY_MISMATCH');
    const right = await run(a, { script: 'scripts/tool.py', args: ['A'] }, asked.requestState);
    expect(right.isError, textOf(right)).toBeFalsy();
    expect(flat(right)).toContain('"argv":["A"]');
    const v = team.verify();
    expect(v.code, v.stderr).toBe(0);
  });
});
