import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/config-schema.js';
import { SkillsError } from '../errors.js';
import { envKeys, sha256Hex } from '../gate/index.js';
import { canonicalJson } from '../canonical-json.js';
import type { Sandbox } from '../sandbox/create-sandbox.js';
import { filterEnv } from '../sandbox/filter-env.js';
import { profileLimits, type Profile } from '../sandbox/profile-schema.js';
import type { SandboxPlan, SandboxResult } from '../sandbox/types.js';
import { hashBundle } from '../skills/bundle-hash.js';
import { collectOutput, type CollectedOutput } from './collect-output.js';
import type { PreparedCall } from './prepare-call.js';

/** Inputs up to this size are also passed in the SKILL_INPUT variable (DESIGN §9). */
const SMALL_INPUT_BYTES = 8 * 1024;

export interface ExecuteDeps {
  config: Config;
  sandbox: Sandbox;
  /** The server's environment: only profile-allowed names are passed on. */
  env: NodeJS.ProcessEnv;
  /** Folder for per-call output folders. */
  runsDir: string;
  /** Loads a profile (cached by the runner). */
  profile: (name: string) => Promise<Profile>;
}

/** What stage 6 decided: ready to spawn, with what goes into `tool_call_started`. */
export interface Launch {
  plan: SandboxPlan;
  profile: Profile;
  outDir: string;
  filesDir: string;
  started: {
    argv: string[];
    args_count: number;
    args_sha256: string;
    env_keys: string[];
    sandbox: Record<string, string | number | boolean>;
    output_dir: string;
  };
}

/**
 * Stages 5–6 of DESIGN §6: re-hash the bundle (a change since binding → STALE_BINDING), check the sandbox
 * (required but unhealthy → SANDBOX_DENIED), resolve the profile, and lay out the per-call folder and plan.
 * Nothing is spawned here.
 */
export async function prepareLaunch(call: PreparedCall, deps: ExecuteDeps): Promise<Launch> {
  const now = hashBundle(call.skill.dir);
  if (now.sha256 !== call.bundle.sha256) {
    throw new SkillsError(
      'STALE_BINDING',
      `the files of skill "${call.skill.name}" changed after the call was approved`,
      {
        hint: 'Nothing was run. Call the tool again so the new version can be reviewed.',
      },
    );
  }
  const { sandbox } = deps;
  const probe = await sandbox.probe();
  if (sandbox.mode === 'required' && !probe.healthy) {
    throw new SkillsError('SANDBOX_DENIED', `no OS sandbox is available: ${probe.diagnosis.message}`, {
      hint: `${probe.diagnosis.hint ?? 'Run `skills-mcp doctor` for details.'} Nothing was run.`,
    });
  }
  const base = await deps.profile(deps.config.sandbox.profile);
  const asked = call.skill.requests.sandboxProfile;
  const requested = asked === undefined ? undefined : await deps.profile(asked).catch(() => undefined);
  const profile = sandbox.resolveProfile(base, requested).profile;
  // Small local writes: synchronous (cheaper than thread-pool round trips on the call path).
  mkdirSync(deps.runsDir, { recursive: true, mode: 0o711 });
  const outDir = await sandbox.createOutputDir(deps.runsDir);
  const filesDir = join(outDir, 'files');
  const inputJson = canonicalJson(call.input ?? {}, { allowFloats: true });
  const inputFile = join(outDir, 'input.json');
  writeFileSync(inputFile, inputJson, { mode: 0o644 });
  const limits = profileLimits(profile);
  if (call.skill.requests.timeoutMs !== undefined)
    limits.wallTimeMs = Math.min(limits.wallTimeMs, call.skill.requests.timeoutMs);
  const env: Record<string, string> = {
    ...filterEnv(deps.env, profile.env.allow),
    SKILL_NAME: call.skill.name,
    SKILL_DIR: call.skill.dir,
    SKILL_OUTPUT: join(outDir, 'output.json'),
    SKILL_FILES_DIR: filesDir,
    SKILL_INPUT_FILE: inputFile,
    TIMEOUT_MS: String(limits.wallTimeMs),
    ...(Buffer.byteLength(inputJson) <= SMALL_INPUT_BYTES ? { SKILL_INPUT: inputJson } : {}),
    ...(deps.config.workspace === undefined ? {} : { SKILL_WORKSPACE: deps.config.workspace }),
  };
  const workspaceWrite = call.skill.requests.workspace === 'write';
  const plan: SandboxPlan = {
    argv: [call.interpreter, call.scriptAbs, ...call.args],
    cwd: outDir,
    env,
    readOnlyPaths: [call.skill.dir],
    writablePaths: [outDir],
    ...(deps.config.workspace === undefined || call.skill.requests.workspace === 'none'
      ? {}
      : { workspace: { path: deps.config.workspace, write: workspaceWrite } }),
    network: call.network === 'full' ? 'full' : profile.network,
    limits,
    stdin: Buffer.from(inputJson),
    profile: profile.name,
    sandbox: profile.sandbox,
  };
  return {
    plan,
    profile,
    outDir,
    filesDir,
    started: {
      argv: [call.interpreter, call.script],
      args_count: call.args.length,
      args_sha256: sha256Hex(canonicalJson(call.args)),
      env_keys: envKeys(Object.keys(env)),
      sandbox: {
        requested: profile.sandbox,
        adapter: sandbox.name,
        profile: profile.name,
        network: plan.network,
        wall_ms: limits.wallTimeMs,
        cpu_s: limits.cpuSeconds,
        memory: probe.limits.memory,
        pids: probe.limits.pids,
        seccomp: probe.seccomp,
      },
      output_dir: outDir,
    },
  };
}

export interface Finished {
  result: SandboxResult;
  output: CollectedOutput;
  stdoutSha256: string;
}

/** Stages 7–8: spawn in the sandbox, honour cancellation, collect the result and artifacts (links refused). */
export async function runLaunch(
  launch: Launch,
  deps: ExecuteDeps,
  opts: { signal?: AbortSignal; onOutput?: (stream: 'stdout' | 'stderr', bytes: number) => void },
): Promise<Finished> {
  const result = await deps.sandbox.run(launch.plan, {
    ...(opts.signal === undefined ? {} : { signal: opts.signal }),
    onOutput: (c) => opts.onOutput?.(c.stream, c.bytes),
  });
  const stdout = result.stdout.toString('utf8');
  const output = await collectOutput(launch.outDir, launch.filesDir, result.truncated.stdout ? '' : stdout);
  return { result, output, stdoutSha256: createHash('sha256').update(result.stdout).digest('hex') };
}
