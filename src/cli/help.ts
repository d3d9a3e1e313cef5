import { CLIENTS } from './client-snippet.js';
import {
  BUNDLES_OPTIONS,
  CONFIG_OPTIONS,
  CONSOLE_OPTIONS,
  APPROVERS_OPTIONS,
  DEPS_OPTIONS,
  DOCTOR_OPTIONS,
  LINT_OPTIONS,
  LIST_OPTIONS,
  RUN_OPTIONS,
  RUNS_OPTIONS,
  SOURCES_OPTIONS,
  SERVE_OPTIONS,
} from './command-options.js';
import { AUDIT_OPTIONS } from './audit-options.js';
import { optionsHelp } from './option-table.js';

/** Help texts of `skills-mcp audit` and its subcommands. */
export const AUDIT_HELP = {
  audit: `Usage: skills-mcp audit <verify|reanchor|archive|list|show|export> [options] [--audit PATH]

Reads the audit log (SQLite; only reanchor and archive write to it).
  verify [--json] [--anchors FILE] [--anchor-key FILE] [--archive FILE]
                                               check the chain, its signed anchors, who wrote each event and
                                               the summary tables (and an archive against its checkpoint)
  archive --older-than DAYS --out FILE [--dry-run]
                                               move sessions ended DAYS ago to a verified archive, prune them
  reanchor --i-understand [--anchors FILE] [--anchor-key FILE]
                                               accept the log as it stands: set the anchors aside, sign anew
  list [--session ID] [--skill NAME] [--limit N] [--json]
                                               calls, oldest first (--limit keeps the most recent N)
  show <call> [--json]                         one call and its events (a unique start or end of its id is enough)
  export --jsonl [--anchors FILE] [--events-only] [--allow-broken]
                                               every event as one JSON line, then the anchors and writer marks

The log holds hashes, sizes and key names: never env values, file contents or raw inputs.
hash = sha256(prev_hash + "\\n" + canonical JSON of {event_id, ts, session_id, call_id, type, payload}).`,
  verify: `Usage: skills-mcp audit verify [--json] [--anchors FILE] [--anchor-key FILE] [--archive FILE]

Recomputes every event's hash and link; checks every signed anchor (the chain heads the server writes outside
the database: default <audit>.anchors, key audit-anchor.key beside the database) to detect truncation,
rewrites and re-hashing up to the last anchor; names every event no holder of the anchor key vouches for (no
writer mark: appended by someone who could write the database, however well it links to the chain); rebuilds
the summary tables from the events and names every difference. Everything is read from one snapshot, so a log
being written verifies as it stood. Exits 1 when any check fails, also when the key exists but the anchor file
is missing or empty while the log holds events, or the file lacks the newest anchor the database recorded
(lines cut from its end). A log never anchored (no key, no anchor file, no writer marks) passes with a warning.
With --audit postgres://USER@HOST:PORT/DATABASE (password from PGPASSWORD or a password file, PGPASSFILE),
checks the chain of a PostgreSQL audit log from one snapshot, and its anchors when --anchors and --anchor-key
(or audit_anchors.file and .key_file) name them; without them it warns that a deleted tail cannot show.
\`export --jsonl\` reads such a log too.
A log that was archived and pruned verifies from its newest checkpoint ("events 1-N archived"); each checkpoint
must be signed with the anchor key. With --archive FILE, also checks an archive written by \`audit archive\`:
its chain and summary, its writer marks and anchors, and that a checkpoint of the log names its sha256 and last
event.

Options:
${optionsHelp(AUDIT_OPTIONS.verify)}`,
  archive: `Usage: skills-mcp audit archive --older-than DAYS --out FILE [--dry-run] [--anchors FILE] [--anchor-key FILE]

Audit retention. Writes the oldest sessions that ended more than DAYS days ago to FILE (a new file, 0600), as
JSON lines in the shape of \`export --jsonl\`: their events, the writer marks and anchors covering them, and an
{"record":"archive_summary",…}. Only a prefix of the chain, never a hole: it stops at the first event of a
session that is still open or ended since. The archive is fsynced and read back; then, in one transaction, the
log records a checkpoint (the last event archived, its hash, the archive's sha256, signed with the anchor key)
and deletes those events, their summary rows and writer marks. Refuses a log that does not verify and needs the
anchor key. A running server may keep writing meanwhile. --dry-run says what it would archive and writes nothing.
A PostgreSQL log cannot be archived yet.

Options:
${optionsHelp(AUDIT_OPTIONS.archive)}`,
  reanchor: `Usage: skills-mcp audit reanchor --i-understand [--anchors FILE] [--anchor-key FILE]

For when the anchors no longer match and you cannot restore them (a lost anchor file, a log restored from a
backup): accepts the audit log as it stands now. Checks the chain itself, renames the anchor file to
<file>.set-aside-<time> (kept), and starts a new one with a signed anchor marked "reanchored" that \`audit
verify\` names from then on. Whatever happened to the log before cannot be proven by anchors any more.
Does nothing when the anchors verify. Restart the server afterwards: it refuses new runs until then.

Options:
${optionsHelp(AUDIT_OPTIONS.reanchor)}`,
  list: `Usage: skills-mcp audit list [--session ID] [--skill NAME] [--limit N] [--json]

Lists calls oldest first: the call id's last 8 characters, time (UTC), session prefix, tool, skill, status, approval,
duration.

Options:
${optionsHelp(AUDIT_OPTIONS.list)}`,
  show: `Usage: skills-mcp audit show <call> [--json]

Shows one call: request hashes, policy, approval, sandboxed run, artifacts and every event.

Options:
${optionsHelp(AUDIT_OPTIONS.show)}`,
  export: `Usage: skills-mcp audit export --jsonl [--anchors FILE] [--events-only] [--allow-broken]

Writes every event to stdout as JSON lines, in chain order, from one snapshot, for archiving or external
verification. Then, unless --events-only, lines with a "record" field (event lines have none): each line of the
anchor file (default <audit>.anchors) as {"record":"anchor","line":N,…}, the database's copy of the newest
anchor as {"record":"anchor_copy",…}, each writer mark as {"record":"writer_mark","first":…,"last":…,"mac":…},
and last {"record":"export_summary","events":N,"chain":"ok"|"broken"}. A broken chain is named on stderr and
exits 1 after the export, unless --allow-broken (exit 0, still warned).

Options:
${optionsHelp(AUDIT_OPTIONS.export)}`,
} as const;

/**
 * Help texts. Option lists come from the tables the parser reads (command-options.ts); docs/cli.md is generated from
 * these (`npm run check` fails on drift).
 */
export const HELP: Record<string, string> = {
  main: `skills-mcp — serve folders of Agent Skills (SKILL.md + scripts) over MCP

Usage:
  skills-mcp [serve] --skills DIR [--skills DIR…] [options]   serve over stdio (default command)
  skills-mcp lint DIR…                                        check skills against the Agent Skills spec
  skills-mcp list [--skills DIR…]                             show the skills that would be served
  skills-mcp config <client> [--skills DIR…]                  print a config snippet for an MCP client
  skills-mcp run <skill> [script] --input JSON                run a skill like a client would (asks on the terminal)
  skills-mcp deps <list|install|prune> [skill…]               skill environments (Python/Node packages)
  skills-mcp doctor                                           check the sandbox, Node and interpreters
  skills-mcp audit <verify|reanchor|archive|list|show|export> read, re-anchor or archive the audit log
  skills-mcp runs prune [--older-than DAYS] [--dry-run]       remove old per-call output folders
  skills-mcp bundles prune [--unused-for DAYS] [--dry-run]    remove verified skill copies no longer used
  skills-mcp console [--audit PATH]                           print the approval console link (for you, not the model)
  skills-mcp approvers <enroll|list|remove> [--name LABEL]    the passkeys that approve runs in the console
  skills-mcp sources <list|update>                            the pinned git repositories of skills: (fetch them)

Run "skills-mcp <command> --help" for a command's options.
Options for every command: --help, --version.
Exit codes: 0 ok, 1 failure (e.g. lint errors), 2 usage or configuration error.`,
  serve: `Usage: skills-mcp [serve] --skills DIR [options]

Serves the skills in DIR over MCP on stdin/stdout (both protocol eras). Logs go to stderr.
Stops when stdin closes, or on SIGINT/SIGTERM (exit 0); exits 1, saying why on stderr, when stdin cannot be
read or stdout written (e.g. the client closed its end of the pipe). A message over --max-message-bytes is
refused with a JSON-RPC error and the server keeps serving; a tool input over 4 MiB is refused with a tool error.
With --http, serves Streamable HTTP at http://HOST:PORT/mcp instead (both eras; GET /healthz for process
managers) until SIGINT/SIGTERM; a second signal stops without waiting for running calls.

Options:
${optionsHelp(SERVE_OPTIONS)}

Environment: SKILLS_MCP_SKILLS (":"-separated), SKILLS_MCP_CONFIG, SKILLS_MCP_TOOLS, SKILLS_MCP_WORKSPACE,
SKILLS_MCP_AUDIT, SKILLS_MCP_LOG_LEVEL, SKILLS_MCP_NO_ELICITATION=1, SKILLS_MCP_MAX_MESSAGE_BYTES,
SKILLS_MCP_TOKEN (HTTP bearer token), SKILLS_MCP_STATE_KEY_FILE, SKILLS_MCP_AUDIT_SQLITE_DRIVER (auto|better-sqlite3|node).
Flags beat env, env beats the file.`,
  runs: `Usage: skills-mcp runs prune [--older-than DAYS] [--dry-run] [--audit PATH] [--config FILE]

Removes per-call output folders (the runs folder beside the audit database, or data_dir) last changed more than
DAYS ago. The server also does this at start and every 6 hours.

Options:
${optionsHelp(RUNS_OPTIONS)}`,
  sources: `Usage: skills-mcp sources <list|update> [--audit PATH] [--config FILE]

The git repositories listed in skills: as {git: URL, ref: COMMIT, path: DIR}, checked out in sources/git/ of the
state folder (data_dir, else beside the audit database). A start fetches a repository only when it has no checkout
yet, and serves a checkout only when it is the pinned commit with no file changed, added or removed.

  list     each source as url@commit, its path and its state (ok, not fetched, changed: what differs)
  update   fetch each source again at the commit its ref names now, and put it in place of the old checkout;
           recorded in the audit log (source_updated: url, path, ref, old and new commit) before it is put in place.
           A source already checked out, unchanged, at the full commit id it pins is left as it is.

Options:
${optionsHelp(SOURCES_OPTIONS)}`,
  bundles: `Usage: skills-mcp bundles prune [--unused-for DAYS] [--dry-run] [--audit PATH] [--config FILE]

Runs execute from read-only, verified copies of the approved skill files (bundles/ beside the audit database, or in
data_dir), one per bundle hash. This removes the copies not used for DAYS days, except one a run is using or a live
session's calls refer to (read from the audit log), and copies a crash left half-made. A removed copy is made
again, and verified, when a call needs it. The server also does this at start and every 6 hours.

Options:
${optionsHelp(BUNDLES_OPTIONS)}`,
  lint: `Usage: skills-mcp lint DIR… [options]

Checks every skill under each DIR against the Agent Skills spec and skills-mcp's extensions.
Prints one finding per line as "path:line: rule: message" (warnings end in "(warning)").
Exits 1 when any finding is an error, 0 otherwise.

Options:
${optionsHelp(LINT_OPTIONS)}`,
  list: `Usage: skills-mcp list [options]

Shows the skills that would be served: name, kind, tool name, origin and warnings, and the ones skipped; and per
skill, the third-party imports no declared environment covers, with the declaration to add.

Options:
${optionsHelp(LIST_OPTIONS)}`,
  config: `Usage: skills-mcp config <client> [--skills DIR…] [--name NAME] [--npx]
       skills-mcp config <client> --http URL [--name NAME]

Prints a configuration snippet for the client with absolute paths, in the client's own format (TOML for Codex), and
on stderr where it goes.
  <client>              ${CLIENTS.join(', ')}

Options:
${optionsHelp(CONFIG_OPTIONS)}`,
  run: `Usage: skills-mcp run <skill> [script] --input JSON|@file [options] [-- args…]

Runs a skill's entry point (or one of its scripts) through the same pipeline as the server: policy, approval,
sandbox, audit. Approval is asked on the terminal (stderr + one line of stdin); without a terminal the configured
fallback applies. Prints the result on stdout and the call id on stderr. Exit 0 when the run succeeded, 1 otherwise.

Options:
${optionsHelp(RUN_OPTIONS)}
  -- args…              arguments passed to the script (run_skill_script)`,
  deps: `Usage: skills-mcp deps <list|install|prune> [skill…] [options]

Skill environments: the Python and Node packages a skill declares (requirements.txt at the skill root or in
scripts/, PEP 723 "# /// script" blocks, package.json + package-lock.json) plus dependencies.skills in the config.
Each is built once per spec, interpreter version and platform, in <envs>/<sha256>/ (default: envs/ beside the
audit database), inside the sandbox ("install" profile: network on, writable only the new folder), and mounted
read-only into the skill's runs. pip and npm use the operator's own settings (index, find-links, certificates).

  list                  each skill's environment: id, built or missing, packages, where they are declared
  install [skill…]      build the missing environments (all skills, or the ones named); each build is recorded
                        in the audit log, bounded by dependencies.max_size_mib and dependencies.timeout_seconds
  prune                 remove environments no current skill uses, and builds a crash left behind

Options:
${optionsHelp(DEPS_OPTIONS)}`,
  audit: AUDIT_HELP.audit,
  console: `Usage: skills-mcp console [options]

Prints the approval console link of each running server that uses this state folder (the folder of the audit
log; with a PostgreSQL --audit, the default state folder). The link is the credential that approves runs: it is
never sent to the MCP client, logged, or put on a command line. Open it in your browser; do not paste it into a
chat.

Options:
${optionsHelp(CONSOLE_OPTIONS)}`,
  approvers: `Usage: skills-mcp approvers <enroll|list|remove ID> [options]

The passkeys that approve runs in the approval console (kept in approvers.json in the state folder; with a
PostgreSQL --audit, in its database, for every replica).
  enroll      serve a one-off page on localhost and print its secret link here (stderr): open it in your
              browser and create a passkey (user verification required); exits once it is enrolled
  list        the enrolled passkeys: id, label, subject (when given), when
  remove ID   remove one (by its id, or a prefix of it that names one; an id starting with - is read as one)
Run it in your own terminal, as the server's user: it is the route the model does not take.

Options:
${optionsHelp(APPROVERS_OPTIONS)}`,
  doctor: `Usage: skills-mcp doctor [options]

Checks what skill scripts would run inside: the platform's sandbox (bubblewrap on Linux, seatbelt on macOS) with a
diagnosis and a fix when it cannot start, the limits layer (cgroups or rlimits), the interpreters scripts use and
whether each one starts inside the sandbox, the programs skills commonly call (LibreOffice, fontconfig,
Ghostscript, poppler, git, ImageMagick) and whether each starts inside, and the sandbox profiles. Then which
SQLite binding an audit log opens with (audit_sqlite_driver: auto): better-sqlite3, or node:sqlite and why
better-sqlite3 does not load in this Node.

Options:
${optionsHelp(DOCTOR_OPTIONS)}

Exit status: 0 when the sandbox is healthy, 1 when it is not, 2 on a usage error.`,
};
