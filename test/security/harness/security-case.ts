/**
 * The security-suite harness. Each case attacks through the real adapter and is judged by host-side
 * canaries (notes/sandbox-linux.md, SAFETY RULES). Every case records a row (`task.meta.security`) that
 * `results-reporter.ts` prints as the results table.
 *
 * SKILLS_MCP_TEST_FORCE_NO_SANDBOX=1 runs the same cases with the adapter forced unavailable: the harness
 * (never production code) points the sandbox at a bwrap that does not exist; every case must then end in
 * SANDBOX_DENIED with its canaries untouched.
 */
import { copyFile, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, it } from 'vitest';
import { isSkillsError } from '../../../src/errors.js';
import { silentLogger } from '../../../src/log.js';
import { createSandbox, type Sandbox, type SandboxOptions } from '../../../src/sandbox/create-sandbox.js';
import { defaultProfilesDir, loadProfile } from '../../../src/sandbox/load-profile.js';
import { profileLimits, type Profile } from '../../../src/sandbox/profile-schema.js';
import type { ProbeResult, RunOptions, SandboxPlan, SandboxResult } from '../../../src/sandbox/types.js';
import { tempDirs } from '../../sandbox/helpers.js';
import { exists, hostNamespaces } from './host.js';

export type Category =
  'filesystem' | 'output' | 'secrets' | 'network' | 'privilege' | 'resources' | 'adapter' | 'install';
export type Outcome = 'blocked' | 'contained' | 'best-effort' | 'breach' | 'denied' | 'ok';

export interface SecurityRow {
  id: string;
  category: Category;
  outcome: Outcome;
  note: string;
  control: boolean;
  context: { uid: number; forced: boolean; limits: string; memory: string; pids: string };
}

declare module 'vitest' {
  interface TaskMeta {
    security?: SecurityRow;
  }
}

export interface Verdict {
  outcome: Outcome;
  note: string;
}
export const blocked = (note: string): Verdict => ({ outcome: 'blocked', note });
export const contained = (note: string): Verdict => ({ outcome: 'contained', note });
export const bestEffort = (note: string): Verdict => ({ outcome: 'best-effort', note });
export const breach = (note: string): Verdict => ({ outcome: 'breach', note });
/** `blocked` when the effect is absent, else `breach`. */
export const blockedIf = (absent: boolean, note: string): Verdict => (absent ? blocked(note) : breach(note));

export const FORCED = process.env.SKILLS_MCP_TEST_FORCE_NO_SANDBOX === '1';
export const FORCED_BWRAP = ['/nonexistent/skills-mcp-forced-unavailable/bwrap'];
const PROBE_SOURCE = fileURLToPath(new URL('../probes/probe.py', import.meta.url));

export interface Harness {
  sandbox: Sandbox;
  probeResult: ProbeResult;
  profile: Profile;
  skill: string;
  probePath: string;
  canaryDir: string;
  ns: Record<string, string>;
  dirs: ReturnType<typeof tempDirs>;
  /** A sandbox with extra options (forced mode still applies). */
  newSandbox(o?: Partial<SandboxOptions>): Sandbox;
}

export interface ProbeOptions {
  /** Plan fields to override (limits are merged). */
  plan?: Partial<Omit<SandboxPlan, 'limits'>> & { limits?: Partial<SandboxPlan['limits']> };
  sandbox?: Sandbox;
  run?: RunOptions;
  /** Extra argv after the probe script. */
  args?: string[];
}

export interface CaseContext {
  h: Harness;
  /** A fresh per-call output folder (writable inside). */
  out(): Promise<string>;
  /** Registers a host canary that must hold in every mode. */
  untouched(label: string, check: () => Promise<boolean> | boolean): void;
  /** Registers cleanup (listeners, processes). */
  defer(fn: () => Promise<void> | void): void;
  plan(action: string, cfg?: Record<string, unknown>, o?: ProbeOptions): SandboxPlan;
  /** Runs a probe action; fails the case if the probe refused or produced no JSON. */
  probe<T = Record<string, unknown>>(
    action: string,
    cfg?: Record<string, unknown>,
    o?: ProbeOptions,
  ): Promise<T>;
  /** Runs a probe action and returns the raw result (for cases where being killed is the point). */
  run(action: string, cfg?: Record<string, unknown>, o?: ProbeOptions): Promise<SandboxResult>;
}

export function createHarness(): () => Harness {
  let h: Harness | undefined;
  const dirs = tempDirs();
  const made: Sandbox[] = [];
  const newSandbox = (o: Partial<SandboxOptions> = {}) => {
    const s = createSandbox({
      log: silentLogger(),
      env: process.env,
      ...o,
      ...(FORCED ? { bwrapCandidates: FORCED_BWRAP } : {}),
    });
    made.push(s);
    return s;
  };
  beforeAll(async () => {
    const sandbox = newSandbox();
    const skill = await dirs.make('skills-mcp-sec-skill-');
    await mkdir(join(skill, 'scripts'));
    const probePath = join(skill, 'scripts', 'probe.py');
    await copyFile(PROBE_SOURCE, probePath);
    h = {
      sandbox,
      probeResult: await sandbox.probe(),
      profile: await loadProfile(defaultProfilesDir(), 'default'),
      skill,
      probePath,
      canaryDir: await dirs.make('skills-mcp-sec-canary-', 0o777),
      ns: await hostNamespaces(),
      dirs,
      newSandbox,
    };
  });
  afterAll(async () => {
    for (const s of made) await s.dispose();
    await dirs.cleanup();
  });
  return () => {
    if (h === undefined) throw new Error('harness not ready');
    return h;
  };
}

function context(h: Harness, id: string) {
  const checks: Array<[string, () => Promise<boolean> | boolean]> = [];
  const deferred: Array<() => Promise<void> | void> = [];
  const execCanary = join(h.canaryDir, `${id}.executed`);
  const plan = (action: string, cfg: Record<string, unknown> = {}, o: ProbeOptions = {}): SandboxPlan => {
    const { limits, ...rest } = o.plan ?? {};
    return {
      argv: ['python3', h.probePath, ...(o.args ?? [])],
      cwd: '/tmp',
      env: {},
      readOnlyPaths: [h.skill],
      writablePaths: [],
      network: 'none',
      profile: 'default',
      stdin: Buffer.from(JSON.stringify({ action, host: { ns: h.ns }, exec_canary: execCanary, ...cfg })),
      ...rest,
      limits: { ...profileLimits(h.profile), ...limits },
    };
  };
  const run = (action: string, cfg?: Record<string, unknown>, o: ProbeOptions = {}) =>
    (o.sandbox ?? h.sandbox).run(plan(action, cfg, o), o.run);
  const ctx: CaseContext = {
    h,
    out: async () => h.sandbox.createOutputDir(await h.dirs.make('skills-mcp-sec-runs-')),
    untouched: (label, check) => checks.push([label, check]),
    defer: (fn) => deferred.push(fn),
    plan,
    run,
    async probe<T>(action: string, cfg?: Record<string, unknown>, o?: ProbeOptions): Promise<T> {
      const r = await run(action, cfg, o);
      const line = r.stdout.toString('utf8').trim().split('\n').pop() ?? '';
      let json: Record<string, unknown>;
      try {
        json = JSON.parse(line) as Record<string, unknown>;
      } catch {
        throw new Error(
          `probe ${action} gave no result (exit ${r.exitCode}, signal ${r.signal}): ${r.stderr.toString().slice(-500)}`,
        );
      }
      if ('refused' in json) throw new Error(`probe ${action} refused to run: ${String(json.refused)}`);
      return json as T;
    },
  };
  return { ctx, checks, deferred, execCanary };
}

interface CaseMeta {
  id: string;
  category: Category;
  title: string;
  /**
   * The server refuses the attack itself, before any sandbox starts: the verdict does not depend on the sandbox,
   * so it stands when the sandbox is forced unavailable (canaries are still checked).
   */
  preflight?: boolean;
  /** For a case that runs many trials (default: the suite's test timeout). */
  timeoutMs?: number;
}

function register(
  meta: CaseMeta,
  control: boolean,
  get: () => Harness,
  fn: (ctx: CaseContext) => Promise<Verdict>,
) {
  it(
    `${meta.id}: ${meta.title}`,
    async ({ task }) => {
      const h = get();
      const { ctx, checks, deferred, execCanary } = context(h, meta.id);
      let verdict: Verdict;
      try {
        verdict = await fn(ctx);
        if (FORCED && meta.preflight !== true)
          verdict = breach('ran although the sandbox was forced unavailable');
      } catch (e) {
        if (!(FORCED && isSkillsError(e) && e.code === 'SANDBOX_DENIED')) throw e;
        verdict = { outcome: 'denied', note: 'SANDBOX_DENIED; canaries untouched' };
      } finally {
        for (const d of deferred.reverse()) await d();
      }
      for (const [label, check] of checks)
        if (!(await check())) verdict = breach(`host canary touched: ${label}`);
      if (await exists(execCanary))
        verdict = breach('the script ran with access to host paths outside its mounts');
      const l = h.probeResult.limits;
      task.meta.security = {
        id: meta.id,
        category: meta.category,
        outcome: verdict.outcome,
        note: verdict.note,
        control,
        context: {
          uid: process.getuid?.() ?? -1,
          forced: FORCED,
          limits: l.cgroup,
          memory: l.memory,
          pids: l.pids,
        },
      };
      if (verdict.outcome === 'breach') throw new Error(`BREACH ${meta.id}: ${verdict.note}`);
      if (control && !FORCED && verdict.outcome !== 'ok')
        throw new Error(`control ${meta.id} failed: ${verdict.note}`);
    },
    meta.timeoutMs,
  );
}

/** An attack case: judged by host-side canaries; `breach` fails the test. */
export const securityCase = (
  get: () => Harness,
  meta: CaseMeta,
  fn: (ctx: CaseContext) => Promise<Verdict>,
) => register(meta, false, get, fn);

/** A positive control: the allowed variant must work, so a sandbox that cannot start fails the suite. */
export const securityControl = (
  get: () => Harness,
  meta: CaseMeta,
  fn: (ctx: CaseContext) => Promise<boolean>,
) =>
  register(meta, true, get, async (ctx) => {
    if (!(await fn(ctx))) throw new Error(`control ${meta.id}: the allowed variant did not work`);
    return { outcome: 'ok', note: 'allowed variant works' };
  });

export interface SecuritySuite {
  /** `securityCase` on this suite's harness. */
  securityCase: (meta: CaseMeta, fn: (ctx: CaseContext) => Promise<Verdict>) => void;
  /** `securityControl` on this suite's harness. */
  securityControl: (meta: CaseMeta, fn: (ctx: CaseContext) => Promise<boolean>) => void;
}

/** One test file's harness (set up before its cases, torn down after) and the registrars bound to it. */
export function securitySuite(): SecuritySuite {
  const get = createHarness();
  return {
    securityCase: (meta, fn) => securityCase(get, meta, fn),
    securityControl: (meta, fn) => securityControl(get, meta, fn),
  };
}
