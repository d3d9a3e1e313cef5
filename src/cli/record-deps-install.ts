import { createHash } from 'node:crypto';
import type { AuditStore } from '../audit/audit-store.js';
import { newCallId } from '../audit/call-id.js';
import { canonicalJson } from '../canonical-json.js';
import type { SkillEnv } from '../envs/create-env-resolver.js';
import type { EnvManifest } from '../envs/env-store.js';
import { isSkillsError } from '../errors.js';

/** The tool name an operator's install is recorded under in the audit log. */
export const DEPS_INSTALL_TOOL = 'deps_install';

const sha256 = (s: string) => createHash('sha256').update(s).digest('hex');

export interface DepsInstallRecord {
  /**
   * Records one environment install around `install`: the request, the operator's decision and the start before it
   * runs (nothing is installed when the log refuses them), the outcome and the installed names and versions after.
   */
  install(skill: string, env: SkillEnv, install: () => Promise<EnvManifest>): Promise<EnvManifest>;
  close(failed: boolean): void;
}

/**
 * `skills-mcp deps install` in the audit log the server writes: one `cli` session from the operator's command line,
 * one call per environment built, with the environment's identity (`env_sha256`), the hash of its spec
 * (`input_sha256`) and what was installed. Same events and hash chain as a server's calls, so `audit verify` covers them.
 */
export function recordDepsInstall(store: AuditStore, version: string): DepsInstallRecord {
  const session = store.startSession({
    transport: 'cli',
    server_version: version,
    client: { name: 'skills-mcp deps install' },
  }).sessionId;
  return {
    async install(skill, env, install) {
      const spec = canonicalJson(env.spec);
      const callId = newCallId();
      store.appendMany([
        {
          type: 'tool_call_requested',
          sessionId: session,
          callId,
          payload: {
            tool: DEPS_INSTALL_TOOL,
            skill,
            input_sha256: sha256(spec),
            input_bytes: Buffer.byteLength(spec),
            input_keys: Object.keys(env.spec).sort(),
            bundle_sha256: null,
            env_sha256: env.id,
            approval_key: sha256(canonicalJson({ tool: DEPS_INSTALL_TOOL, env: env.id })),
            valid: true,
          },
        },
        {
          type: 'policy_decided',
          sessionId: session,
          callId,
          payload: {
            decision: 'allow',
            rule: 'operator command line: skills-mcp deps install',
            risk: { level: 'low', code: 'operator_cli', reason: 'run by the operator, not by a model' },
          },
        },
      ]);
      store.append({
        type: 'tool_call_started',
        sessionId: session,
        callId,
        payload: {
          argv: [env.spec.python.length > 0 ? 'pip' : 'npm'],
          env_keys: [],
          sandbox: { profile: 'install' },
          output_dir: env.dir,
          env_sha256: env.id,
          env_install: true,
        },
      });
      const started = Date.now();
      const finish = (status: 'ok' | 'error', extra: Record<string, unknown>) =>
        store.append({
          type: 'tool_call_finished',
          sessionId: session,
          callId,
          payload: {
            status,
            exit_code: null,
            duration_ms: Date.now() - started,
            stdout_sha256: null,
            stdout_bytes: 0,
            stderr_bytes: 0,
            artifacts: [],
            ...extra,
          },
        });
      let manifest: EnvManifest;
      try {
        manifest = await install();
      } catch (e) {
        finish('error', { error_code: isSkillsError(e) ? e.code : 'INTERNAL' });
        throw e;
      }
      finish('ok', { env_installed: manifest.installed });
      return manifest;
    },
    close(failed) {
      store.endSession(session, failed ? 'error' : 'client_closed');
    },
  };
}
