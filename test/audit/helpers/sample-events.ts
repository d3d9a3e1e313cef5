import { createHash } from 'node:crypto';
import type {
  AppendInput,
  AuditStore,
  ToolCallFinishedPayload,
  ToolCallRequestedPayload,
  ToolCallStartedPayload,
} from '../../../src/audit/index.js';

export const sha = (s: string): string => createHash('sha256').update(s).digest('hex');

export const requested = (over: Partial<ToolCallRequestedPayload> = {}): ToolCallRequestedPayload => ({
  tool: 'run_skill_script',
  skill: 'pdf',
  script: 'scripts/fill.py',
  input_sha256: sha('{"a":1}'),
  input_bytes: 7,
  input_keys: ['a'],
  bundle_sha256: sha('bundle'),
  approval_key: sha('key'),
  valid: true,
  ...over,
});

export const started = (over: Partial<ToolCallStartedPayload> = {}): ToolCallStartedPayload => ({
  argv: ['python3', 'scripts/fill.py'],
  env_keys: ['PATH', 'SKILL_DIR'],
  sandbox: {
    adapter: 'bwrap',
    active: true,
    profile: 'default',
    network: 'none',
    limits: { wall: 'enforced' },
  },
  output_dir: '/tmp/out/1',
  ...over,
});

export const finished = (over: Partial<ToolCallFinishedPayload> = {}): ToolCallFinishedPayload => ({
  status: 'ok',
  exit_code: 0,
  duration_ms: 12,
  stdout_sha256: sha('out'),
  stdout_bytes: 3,
  stderr_bytes: 0,
  artifacts: [],
  ...over,
});

export const startSession = (store: AuditStore, sessionId?: string): string =>
  store.startSession({ transport: 'stdio', server_version: '0.1.0' }, sessionId ? { sessionId } : {})
    .sessionId;

/** The events of a full gated call after the request: policy → approval asked/decided → started → finished. */
function gatedCallEvents(sessionId: string, callId: string, key: string, artifacts: number): AppendInput[] {
  const files = Array.from({ length: artifacts }, (_, i) => ({
    path: `files/a${i}.txt`,
    sha256: sha(`a${i}`),
    bytes: i,
  }));
  return [
    {
      type: 'policy_decided',
      sessionId,
      callId,
      payload: { decision: 'ask', rule: null, risk: { level: 'low', code: 'none', reason: 'no findings' } },
    },
    { type: 'approval_requested', sessionId, callId, payload: { approval_key: key, channel: 'elicitation' } },
    {
      type: 'approval_decided',
      sessionId,
      callId,
      payload: { approval_key: key, decision: 'approved', reason: 'user', channel: 'elicitation' },
    },
    { type: 'tool_call_started', sessionId, callId, payload: started() },
    { type: 'tool_call_finished', sessionId, callId, payload: finished({ artifacts: files }) },
  ];
}

/** A full gated call, one commit per event. Returns the call id. */
export function gatedCall(store: AuditStore, sessionId: string, key = sha('key'), artifacts = 0): string {
  const callId = store.append({
    type: 'tool_call_requested',
    sessionId,
    payload: requested({ approval_key: key }),
  }).callId;
  for (const e of gatedCallEvents(sessionId, callId, key, artifacts)) store.append(e);
  return callId;
}

/** The same call through group commit, awaiting each event before the next as the runner would. */
export async function gatedCallAsync(
  store: AuditStore,
  sessionId: string,
  key = sha('key'),
): Promise<string> {
  const req = await store.appendAsync({
    type: 'tool_call_requested',
    sessionId,
    payload: requested({ approval_key: key }),
  });
  for (const e of gatedCallEvents(sessionId, req.callId, key, 1)) await store.appendAsync(e);
  return req.callId;
}
