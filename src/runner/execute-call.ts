import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../config/config-schema.js';
import type { Logger } from '../log.js';
import { SkillsError } from '../errors.js';
import type { EnvResolver, SkillEnv } from '../envs/create-env-resolver.js';
import { envKeys, sha256Hex } from '../gate/index.js';
import { canonicalJson } from '../canonical-json.js';
import type { Sandbox } from '../sandbox/create-sandbox.js';
import { filterEnv } from '../sandbox/filter-env.js';
import { profileLimits, type Profile } from '../sandbox/profile-schema.js';
import type { SandboxPlan, SandboxResult } from '../sandbox/types.js';
import type { BundleCopy, BundleStore } from '../skills/bundle-store.js';
import { folderIdOf } from '../sandbox/output-folder.js';
import { collectOutput, type CollectedOutput, type OutputFolders } from './collect-output.js';
import type { PreparedCall } from './prepare-call.js';
import type { RunSlots } from './run-slots.js';
import { checkSessionFolder, sessionFolderOf, type SessionFolderCheck } from './session-folder-run.js';
import { folderBytes, removeEmptyCallFolder, tidyCallFolder } from './tidy-call-folder.js';
import type { UnrecordedFinishes } from './unrecorded-finishes.js';

/** Inputs up to this size are also passed in the SKILL_INPUT variable. */
const SMALL_INPUT_BYTES = 8 * 1024;

export interface ExecuteDeps {
  config: Config;
  sandbox: Sandbox;
  /** The server's environment: only profile-allowed names are passed on. */
  env: NodeJS.ProcessEnv;
  /** Folder for per-call output folders. */
  runsDir: string;
  /** Host paths the server reads besides its skills folders (audit log, profiles folder). */
  serverPaths: string[];
  /** Host paths left out of a workspace copy (the approval console's link files). */
  privatePaths?: string[];
  /** Read-only copies of approved bundles: what runs. */
  bundles: BundleStore;
  /** Loads a profile (cached by the runner). */
  profile: (name: string) => Promise<Profile>;
  envs?: EnvResolver;
  log?: Logger;
  /** Admission of concurrent runs; without it, runs are not capped. */
  slots?: RunSlots;
  /** Where the ends of runs the audit log refused wait to be written. */
  unrecorded?: UnrecordedFinishes;
}

/** What stage 6 decided: ready to spawn, with what goes into `tool_call_started`. */
export interface Launch {
  plan: SandboxPlan;
  profile: Profile;
  /** The per-call folders, identified before the spawn: collection refuses a folder swapped since. */
  folders: OutputFolders;
  /** The session's working folder, when it is on. */
  sessionDir?: string;
  /** The environment to build before the run (approved with the call). */
  install?: SkillEnv;
  /** Ends the run's hold on the bundle copy (once the run is over): prune may remove it after. */
  release: () => void;
  started: {
    argv: string[];
    args_count: number;
    args_sha256: string;
    env_keys: string[];
    sandbox: Record<string, string | number | boolean>;
    output_dir: string;
    env_sha256?: string;
    env_install?: boolean;
  };
}

/**
 * Steps 5–6 of a gated call (docs/architecture.md): take the read-only copy of the approved bundle (made and
 * verified on first need: a change since binding → STALE_BINDING), check the sandbox (required but unhealthy →
 * SANDBOX_DENIED), resolve the profile, and lay out the per-call folder and plan. The script runs from the copy,
 * never from the live folder. Nothing is spawned here.
 */
export async function prepareLaunch(call: PreparedCall, deps: ExecuteDeps): Promise<Launch> {
  let bundle: BundleCopy;
  try {
    bundle = await deps.bundles.materialize(call.skill.dir, call.bundle.sha256);
  } catch (e) {
    if (!(e instanceof SkillsError && e.code === 'STALE_BINDING')) throw e;
    throw new SkillsError(
      'STALE_BINDING',
      `the files of skill "${call.skill.name}" changed after the call was approved`,
      { hint: 'Nothing was run. Call the tool again so the new version can be reviewed.' },
    );
  }
  try {
    return { ...(await planLaunch(call, deps, bundle.dir)), release: bundle.release };
  } catch (e) {
    bundle.release();
    throw e;
  }
}

async function planLaunch(
  call: PreparedCall,
  deps: ExecuteDeps,
  copy: string,
): Promise<Omit<Launch, 'release'>> {
  const skillEnv = call.env === undefined ? undefined : await deps.envs?.forSkill(call.skill);
  if (skillEnv?.id !== call.env?.id) {
    throw new SkillsError(
      'STALE_BINDING',
      `the dependency declaration of skill "${call.skill.name}" changed after the call was approved`,
      { hint: 'Nothing was installed or run. Call the tool again so the new environment can be reviewed.' },
    );
  }
  const { sandbox } = deps;
  const probe = await sandbox.probe();
  if (sandbox.mode === 'required' && !probe.healthy) {
    throw new SkillsError('SANDBOX_DENIED', `no OS sandbox is available: ${probe.diagnosis.message}`, {
      hint: `${probe.diagnosis.hint ?? 'Run `skills-mcp doctor` for details.'} Nothing was run.`,
    });
  }
  // The profile resolved when the call was prepared: the one the guard rated and the form showed.
  const { profile } = call;
  // Small local writes: synchronous (cheaper than thread-pool round trips on the call path).
  mkdirSync(deps.runsDir, { recursive: true, mode: 0o711 });
  const outDir = await sandbox.createOutputDir(deps.runsDir);
  const filesDir = join(outDir, 'files');
  const folders = { outDir, filesDir, out: folderIdOf(outDir), files: folderIdOf(filesDir) };
  const sessionDir = sessionFolderOf(call, deps);
  const inputJson = canonicalJson(call.input ?? {}, { allowFloats: true });
  const inputFile = join(outDir, 'input.json');
  writeFileSync(inputFile, inputJson, { mode: 0o644 });
  const limits = profileLimits(profile);
  if (call.skill.requests.timeoutMs !== undefined)
    limits.wallTimeMs = Math.min(limits.wallTimeMs, call.skill.requests.timeoutMs);
  // The skill root goes on PYTHONPATH (not a `sys.path` insert by a wrapper): package-style skills
  // (`from scripts.helpers import x`, `python -m scripts.tool`) then work whether run as a file or a module,
  // `__main__`, argv and tracebacks stay the script's own, and Python subprocesses the script starts inherit it.
  // The working folder is the call's files folder (below).
  const env: Record<string, string> = {
    ...filterEnv(deps.env, profile.env.allow),
    SKILL_NAME: call.skill.name,
    SKILL_DIR: copy,
    // The copy is read-only and exactly what was approved: interpreters write no bytecode caches into it.
    PYTHONDONTWRITEBYTECODE: '1',
    SKILL_OUTPUT: join(outDir, 'output.json'),
    SKILL_FILES_DIR: filesDir,
    ...(sessionDir === undefined ? {} : { SKILL_SESSION_DIR: sessionDir }),
    SKILL_INPUT_FILE: inputFile,
    TIMEOUT_MS: String(limits.wallTimeMs),
    ...(Buffer.byteLength(inputJson) <= SMALL_INPUT_BYTES ? { SKILL_INPUT: inputJson } : {}),
    ...(deps.config.workspace === undefined ? {} : { SKILL_WORKSPACE: deps.config.workspace }),
    ...(call.interpreter === 'python3'
      ? {
          PYTHONPATH:
            skillEnv !== undefined && skillEnv.spec.python.length > 0
              ? `${copy}:${join(skillEnv.dir, 'python')}`
              : copy,
        }
      : {}),
    ...(call.interpreter === 'node' && skillEnv !== undefined && Object.keys(skillEnv.spec.node).length > 0
      ? { NODE_PATH: join(skillEnv.dir, 'node', 'node_modules') }
      : {}),
  };
  const workspaceWrite = call.grants.requests.workspace === 'write';
  // Python scripts run on the operator's chosen interpreter (`dependencies.python`), the one their environment
  // was built for, and the one the form names.
  const command = call.program;
  const plan: SandboxPlan = {
    argv:
      call.module === undefined
        ? [command, join(copy, call.script), ...call.args]
        : [command, '-m', call.module, ...call.args],
    // Relative output paths land in the files folder, so they come back as files of the result.
    cwd: filesDir,
    env,
    // The operator's extra read-only paths (profile, then config) were checked when they were loaded.
    readOnlyPaths: [
      copy,
      ...(skillEnv === undefined ? [] : [skillEnv.dir]),
      ...profile.readOnlyPaths,
      ...deps.config.sandbox.read_only_paths,
    ],
    writablePaths: sessionDir === undefined ? [outDir] : [outDir, sessionDir],
    ...(deps.config.workspace === undefined || call.grants.requests.workspace === 'none'
      ? {}
      : {
          workspace: {
            path: deps.config.workspace,
            write: workspaceWrite,
            protect: [...deps.config.skills, deps.runsDir, ...deps.serverPaths],
            applyFailed: deps.config.runs.apply_failed_workspace_changes,
            keepIn: filesDir,
            ...(deps.privatePaths === undefined || deps.privatePaths.length === 0
              ? {}
              : { hide: deps.privatePaths, emptyDir: emptyFolder(deps.runsDir) }),
          },
        }),
    // As the form showed it (`callNetwork`): `network: none` set by the operator holds even when the profile has it.
    network: call.network,
    limits,
    stdin: Buffer.from(inputJson),
    profile: profile.name,
    sandbox: profile.sandbox,
  };
  return {
    plan,
    profile,
    folders,
    ...(sessionDir === undefined ? {} : { sessionDir }),
    ...(skillEnv === undefined || skillEnv.ready ? {} : { install: skillEnv }),
    started: {
      argv:
        call.module === undefined ? [call.interpreter, call.script] : [call.interpreter, '-m', call.module],
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
      ...(skillEnv === undefined ? {} : { env_sha256: skillEnv.id, env_install: !skillEnv.ready }),
    },
  };
}

/** `<runs>/.empty`: an empty folder, read-only, mounted over the paths a workspace must hide. */
function emptyFolder(runsDir: string): string {
  const dir = join(runsDir, '.empty');
  mkdirSync(dir, { recursive: true, mode: 0o555 });
  return dir;
}

export interface Finished {
  result: SandboxResult;
  output: CollectedOutput;
  stdoutSha256: string;
  /** The session folder went over a cap in this run (and was emptied). */
  sessionFull?: SessionFolderCheck;
}

/** Stages 7–8: spawn in the sandbox, honour cancellation, collect the result and artifacts (links refused). */
export async function runLaunch(
  launch: Launch,
  deps: ExecuteDeps,
  opts: {
    signal?: AbortSignal;
    /** The go for the run (see `RunOptions.ready`). */
    ready?: Promise<void>;
    onOutput?: (stream: 'stdout' | 'stderr', bytes: number) => void;
  },
): Promise<Finished> {
  const result = await deps.sandbox.run(launch.plan, {
    ...(opts.signal === undefined ? {} : { signal: opts.signal }),
    ...(opts.ready === undefined ? {} : { ready: opts.ready }),
    onOutput: (c) => opts.onOutput?.(c.stream, c.bytes),
  });
  // The whole call folder counts against the quota, not just files/: over it, nothing of the call is kept.
  const { runs } = deps.config;
  if (folderBytes(launch.folders.outDir, runs.max_call_bytes) > runs.max_call_bytes) {
    deps.log?.warn(
      { quota: runs.max_call_bytes },
      'a call folder went over its quota: its files were deleted',
    );
    tidyCallFolder(launch.folders.outDir, { keepInput: false, emptyFiles: true });
  }
  const stdout = result.stdout.toString('utf8');
  const output = await collectOutput(launch.folders, result.truncated.stdout ? '' : stdout);
  tidyCallFolder(launch.folders.outDir, { keepInput: runs.keep_input, emptyFiles: false });
  if (output.artifacts.length === 0) removeEmptyCallFolder(launch.folders.outDir);
  const sessionFull =
    launch.sessionDir === undefined ? undefined : await checkSessionFolder(launch.sessionDir, deps);
  return {
    result,
    output,
    stdoutSha256: createHash('sha256').update(result.stdout).digest('hex'),
    ...(sessionFull === undefined ? {} : { sessionFull }),
  };
}
