import * as z from 'zod';
import { ApprovalConfigSchema } from './approval-schema.js';
import { DependenciesConfigSchema } from './dependencies-schema.js';
import { GitSourceSchema, oneRefPerUrl, type GitSource } from './git-source-schema.js';
import { OAuthConfigSchema } from './oauth-schema.js';
import { SkillOverridesSchema } from './skill-overrides-schema.js';
import { AuditLeaseSchema, AuditRecordsSchema } from './team-audit-schema.js';

export const TOOL_MODES = ['per-skill', 'compact', 'auto'] as const;
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal', 'silent'] as const;

/**
 * skills-mcp configuration. Layered: defaults < config file (skills-mcp.yaml) < SKILLS_MCP_* env < flags.
 * The README's configuration table is generated from these descriptions (`npm run check` fails on drift).
 */
export const ConfigSchema = z
  .strictObject({
    skills: z
      .array(z.union([z.string().min(1), GitSourceSchema]))
      .superRefine(oneRefPerUrl)
      .default([])
      .describe(
        'Skills folders to serve (flag --skills, repeatable; env SKILLS_MCP_SKILLS, ":"-separated); "auto" stands for the skill folders of the agent hosts; an entry {git: URL, ref: COMMIT, path: DIR} is a pinned git repository (docs/skill-sources.md). A name claimed twice is not served.',
      ),
    tools: z
      .enum(TOOL_MODES)
      .default('auto')
      .describe(
        'Tool layout: one tool per skill, compact (list_skills + load_skill), or auto (per-skill up to 30 skills).',
      ),
    elicitation: z
      .boolean()
      .default(true)
      .describe(
        'Ask approvals through MCP elicitation when the client supports it; false (--no-elicitation) forces the fallback.',
      ),
    workspace: z
      .string()
      .min(1)
      .optional()
      .describe(
        'A folder skills may read (and write, when policy grants it) at the same path inside the sandbox.',
      ),
    audit: z
      .string()
      .min(1)
      .optional()
      .describe('Audit database path. Default: $XDG_STATE_HOME/skills-mcp/audit.db (~/.local/state/…).'),
    audit_sqlite_driver: z
      .enum(['auto', 'better-sqlite3', 'node'])
      .default('auto')
      .describe(
        'SQLite binding of the audit log. auto: better-sqlite3 when its native module loads, else node:sqlite ' +
          '(Node 22.13+, no native module). Both read and write the same file.',
      ),
    audit_anchors: z
      .strictObject({
        file: z
          .string()
          .min(1)
          .optional()
          .describe(
            'File the signed chain heads are appended to (JSON lines). Default: the audit database path + ".anchors".',
          ),
        key_file: z
          .string()
          .min(1)
          .optional()
          .describe(
            'Key that signs the anchors, made (0600) when missing. Default: audit-anchor.key beside the database.',
          ),
        interval_ms: z
          .number()
          .int()
          .min(100)
          .default(60_000)
          .describe('How often new audit events are verified and anchored (also at start and shutdown).'),
        log: z
          .boolean()
          .default(false)
          .describe('Also write every anchor to the log (stderr), for an outside copy.'),
      })
      .prefault({})
      .describe('Signed audit chain heads kept outside the database (see Audit log).'),
    audit_lease: AuditLeaseSchema,
    audit_records: AuditRecordsSchema,
    log_level: z
      .enum(LOG_LEVELS)
      .optional()
      .describe(
        "Log level on stderr. Unset: warn over stdio (hosts show a server's stderr to their users), info over HTTP.",
      ),
    max_message_bytes: z
      .number()
      .int()
      .min(64 * 1024)
      .max(256 * 1024 * 1024)
      .default(16 * 1024 * 1024)
      .describe(
        'Largest MCP message read over stdio, in bytes (flag --max-message-bytes; env SKILLS_MCP_MAX_MESSAGE_BYTES). A longer one is discarded as it arrives, never held in memory, and answered with a JSON-RPC error; the server keeps serving. The default fits the largest tool input (4 MiB) in any JSON encoding.',
      ),
    approval: ApprovalConfigSchema.prefault({}).describe(
      'Who decides whether a skill script may run (see Approvals).',
    ),
    sandbox: z
      .strictObject({
        profile: z
          .string()
          .regex(/^[a-z0-9-]+$/)
          .default('default')
          .describe(
            'Sandbox profile for skill scripts (a file in sandbox-profiles/); a skill may ask for a stricter one.',
          ),
        mode: z
          .enum(['required', 'off'])
          .default('required')
          .describe(
            'required: scripts run only inside an OS sandbox (else refused). off: no sandbox (logged, audited).',
          ),
        profiles_dir: z
          .string()
          .min(1)
          .optional()
          .describe('Folder of sandbox profiles (default: the bundled sandbox-profiles/).'),
        read_only_paths: z
          .array(z.string().min(1).max(4096))
          .max(64)
          .default([])
          .describe(
            'Host paths every skill script sees read-only at the same path, added to the built-in layout (/usr, the /etc entries programs need): a program installed under /opt, extra fonts. Each must exist, be its real path, hold no secrets (home folders, .ssh, /etc/shadow, the server state, container sockets) and be writable by no one but its owner; a bad one stops the server with exit 2.',
          ),
      })
      .prefault({})
      .describe('OS sandbox for skill scripts.'),
    skill_overrides: SkillOverridesSchema,
    dependencies: DependenciesConfigSchema.prefault({}).describe(
      'Skill environments: Python and Node packages skills declare, installed under the data folder.',
    ),
    data_dir: z
      .string()
      .min(1)
      .optional()
      .describe('Where per-call output folders are kept. Default: the audit database folder + /runs.'),
    pending_approvals: z
      .strictObject({
        per_session: z
          .number()
          .int()
          .min(1)
          .default(16)
          .describe('Approvals waiting for an answer per session.'),
        per_session_bytes: z
          .number()
          .int()
          .min(0)
          .default(16 * 1024 * 1024)
          .describe('Input bytes the waiting approvals of one session may hold.'),
        total: z
          .number()
          .int()
          .min(1)
          .default(256)
          .describe('Approvals waiting for an answer, all sessions together.'),
        total_bytes: z
          .number()
          .int()
          .min(0)
          .default(128 * 1024 * 1024)
          .describe(
            'Input bytes all waiting approvals may hold. Past any of these, a call is refused (APPROVALS_BUSY), not queued.',
          ),
      })
      .prefault({})
      .describe('Budgets for approvals waiting for an answer (each keeps its call and input in memory).'),
    runs: z
      .strictObject({
        memory_share: z
          .number()
          .gt(0)
          .max(1)
          .default(0.75)
          .describe(
            "Share of the machine's memory that the memory limits of running sandboxes may add up to (each run counts its profile's memoryMiB; one run is always allowed).",
          ),
        max_per_session: z
          .number()
          .int()
          .min(1)
          .default(4)
          .describe('Sandboxed runs at once per session (stdio process, legacy HTTP session, or token).'),
        wait_ms: z
          .number()
          .int()
          .min(0)
          .default(10_000)
          .describe('How long a run waits for room under those caps before it is refused (RUNS_BUSY).'),
        apply_failed_workspace_changes: z
          .boolean()
          .default(false)
          .describe(
            "Apply the workspace changes of a run that failed (non-zero exit, signal, timeout, out of memory, cancelled). Off: nothing is applied, the result lists what would have changed and the written files are kept among the call's files (workspace-changes/).",
          ),
        max_call_bytes: z
          .number()
          .int()
          .min(0)
          .default(512 * 1024 * 1024)
          .describe(
            "Size quota of one call's folder after the run; over it, the call's files are deleted. Everything but files/ goes anyway.",
          ),
        retention_days: z
          .number()
          .int()
          .min(0)
          .default(7)
          .describe('Call folders older than this are removed (at start, then every 6 hours; 0 keeps them).'),
        bundle_retention_days: z
          .number()
          .int()
          .min(0)
          .default(14)
          .describe(
            'Verified skill copies (bundles/) not used for this many days are removed, unless a run or a live session uses them (at start, then every 6 hours; 0 keeps them).',
          ),
        keep_input: z
          .boolean()
          .default(false)
          .describe("Keep each call's raw input (input.json) in its folder after the call; off by default."),
        session_folder: z
          .strictObject({
            enabled: z
              .boolean()
              .default(true)
              .describe(
                "Give every run a folder of its session ($SKILL_SESSION_DIR, read-write): what one run leaves there the session's next runs find (unpack, edit, pack across calls) without writing the workspace. Removed when the session ends.",
              ),
            max_bytes: z
              .number()
              .int()
              .min(0)
              .default(256 * 1024 * 1024)
              .describe(
                'Size cap of a session folder (bytes of its files), checked after each run: over it, the run is an error and the folder is emptied.',
              ),
            max_files: z
              .number()
              .int()
              .min(1)
              .default(10_000)
              .describe(
                'Cap on the entries (files, folders, links) in a session folder, checked like `max_bytes`.',
              ),
          })
          .prefault({})
          .describe("The session's working folder, shared by the runs of one session and private to it."),
      })
      .prefault({})
      .describe('Caps on concurrent sandboxed runs.'),
    http: z
      .strictObject({
        enabled: z.boolean().default(false).describe('Serve Streamable HTTP instead of stdio (flag --http).'),
        host: z
          .string()
          .min(1)
          .default('127.0.0.1')
          .describe('Bind address (flag --host). Not loopback ⇒ a token or `oauth` is required.'),
        port: z
          .number()
          .int()
          .min(0)
          .max(65535)
          .default(3333)
          .describe('Port (flag --port); 0 picks a free one (logged).'),
        token_file: z
          .string()
          .min(1)
          .optional()
          .describe('File holding the bearer token (flag --token-file; or env SKILLS_MCP_TOKEN).'),
        state_key_file: z
          .string()
          .min(1)
          .optional()
          .describe(
            'File holding the secret every replica shares to sign approval round trips of 2026-07-28 clients (flag --state-key-file; env SKILLS_MCP_STATE_KEY_FILE): at least 32 bytes as hex (`openssl rand -hex 32`), mode 600 (or 640). Default: a random key per process, so a retry must reach the same process.',
          ),
        oauth: OAuthConfigSchema.optional(),
        allowed_hosts: z
          .array(z.string().min(1))
          .default([])
          .describe('Extra Host header values accepted (DNS-rebinding guard).'),
        allowed_origins: z
          .array(z.string().min(1))
          .default([])
          .describe('Extra Origin values accepted (browser clients).'),
        max_connections: z
          .number()
          .int()
          .min(1)
          .default(1024)
          .describe(
            'Open connections at once (kept under half the open-file limit). At the cap, the oldest connection that has not yet sent a whole request is closed, else the oldest of the client (token, or peer address without a token) holding the most; one client holds at most three quarters of them.',
          ),
        headers_timeout_ms: z
          .number()
          .int()
          .min(100)
          .default(10_000)
          .describe('Time a client has to send a request line and headers.'),
        request_timeout_ms: z
          .number()
          .int()
          .min(100)
          .default(30_000)
          .describe('Time a client has to send a whole request (headers and body).'),
        max_in_flight_per_client: z
          .number()
          .int()
          .min(1)
          .default(64)
          .describe(
            'Requests being served at once per client (legacy session, token, or peer address without a token); more get 429.',
          ),
        max_listen_streams_per_client: z
          .number()
          .int()
          .min(1)
          .default(32)
          .describe(
            'subscriptions/listen streams (2026-07-28 clients) open at once per client (token, or peer address without a token); more get 429.',
          ),
        max_sessions: z
          .number()
          .int()
          .min(1)
          .default(1000)
          .describe('Legacy (2025-era) sessions open at once; more get 503.'),
        max_sessions_per_client: z
          .number()
          .int()
          .min(1)
          .default(100)
          .describe(
            "Legacy sessions per client (token and peer address); a new one past it closes that client's least recently used session with no request in flight and no open stream.",
          ),
        session_idle_ms: z
          .number()
          .int()
          .min(1000)
          .default(1_800_000)
          .describe(
            'A legacy session with no request in flight for this long is closed, even when it holds an idle GET stream.',
          ),
        health_details: z
          .boolean()
          .default(false)
          .describe(
            '/healthz shows session and in-flight counts (and, with a PostgreSQL log, the read-only records shed or lost) without a token (with a token configured, only to callers presenting it).',
          ),
      })
      .refine((h) => h.token_file === undefined || h.oauth === undefined, {
        path: ['oauth'],
        message: 'use either a bearer token (token_file) or oauth, not both',
      })
      .prefault({})
      .describe('Streamable HTTP transport.'),
    watch: z
      .boolean()
      .default(true)
      .describe('Reload skills when their files change and notify clients (list_changed).'),
    skills_extension: z
      .boolean()
      .default(true)
      .describe(
        'Serve the MCP Skills extension (skills/list, skills/get, resources/directory/read) next to tools, prompts and resources.',
      ),
  })
  // The commands read `skills` as folders: the git entries are set apart, and the CLI adds their checked-out folders.
  .transform(({ skills, ...rest }) => ({
    ...rest,
    skills: skills.filter((e): e is string => typeof e === 'string'),
    git_sources: skills.filter((e): e is GitSource => typeof e !== 'string'),
  }));

/** A served folder of a pinned git source, and how it is named to people (`url@short-commit`). */
export interface GitRoot {
  root: string;
  label: string;
  /** Checks the checkout against its pin again (every file hashed): why it no longer matches, or undefined. */
  verify?: () => string | undefined;
}

/** The configuration as the commands use it; `git_roots` is set by the CLI once the git sources are checked. */
export type Config = z.output<typeof ConfigSchema> & { git_roots?: readonly GitRoot[] };
export type ConfigInput = z.input<typeof ConfigSchema>;
