/** Help texts of `skills-mcp audit` and its subcommands. */
export const AUDIT_HELP = {
  audit: `Usage: skills-mcp audit <verify|list|show|export> [options] [--audit PATH]

Reads the audit log (SQLite, never modified by these commands).
  verify [--json]                              check the hash chain; exit 1 naming the first bad event
  list [--session ID] [--skill NAME] [--limit N] [--json]
                                               calls, oldest first (--limit keeps the most recent N)
  show <call> [--json]                         one call and its events (a unique id prefix is enough)
  export --jsonl                               every event as one JSON line, with prev_hash and hash

The log holds hashes, sizes and key names: never env values, file contents or raw inputs.
hash = sha256(prev_hash + "\\n" + canonical JSON of {event_id, ts, session_id, call_id, type, payload}).`,
  verify: `Usage: skills-mcp audit verify [--json]

Recomputes every event's hash and link. Prints the event count and the head hash (record it elsewhere
to detect truncation or a rewritten log). Exits 1 and names the first bad event when the chain is broken.`,
  list: `Usage: skills-mcp audit list [--session ID] [--skill NAME] [--limit N] [--json]

Lists calls oldest first: id prefix, time (UTC), session prefix, tool, skill, status, approval, duration.`,
  show: `Usage: skills-mcp audit show <call> [--json]

Shows one call: request hashes, policy, approval, sandboxed run, artifacts and every event.`,
  export: `Usage: skills-mcp audit export --jsonl

Writes every event to stdout as JSON lines, in chain order, for archiving or external verification.`,
} as const;

/** Help texts. The README's CLI reference is generated from these (`npm run check` fails on drift). */
export const HELP: Record<string, string> = {
  main: `skills-mcp — serve folders of Agent Skills (SKILL.md + scripts) over MCP

Usage:
  skills-mcp [serve] --skills DIR [--skills DIR…] [options]   serve over stdio (default command)
  skills-mcp lint DIR…                                        check skills against the Agent Skills spec
  skills-mcp list [--skills DIR…]                             show the skills that would be served
  skills-mcp config <client> [--skills DIR…]                  print a config snippet for an MCP client
  skills-mcp run <skill> [script] --input JSON                run a skill like a client would (asks on the terminal)
  skills-mcp doctor                                           check the sandbox, Node and interpreters
  skills-mcp audit <verify|list|show|export>                  read the audit log

Run "skills-mcp <command> --help" for a command's options.
Options for every command: --help, --version.
Exit codes: 0 ok, 1 failure (e.g. lint errors), 2 usage or configuration error.`,
  serve: `Usage: skills-mcp [serve] --skills DIR [options]

Serves the skills in DIR over MCP on stdin/stdout (both protocol eras). Logs go to stderr.
Stops when stdin closes, or on SIGINT/SIGTERM.
With --http, serves Streamable HTTP at http://HOST:PORT/mcp instead (both eras; GET /healthz for process
managers) until SIGINT/SIGTERM; a second signal stops without waiting for running calls.

Options:
  --skills DIR          skills folder; repeatable; the first root wins on duplicate names
  --config FILE         config file (default: ./skills-mcp.yaml when present)
  --tools MODE          per-skill | compact | auto (default auto: per-skill up to 30 skills)
  --workspace DIR       a folder skills may read at the same path inside the sandbox
  --audit PATH          audit database (default $XDG_STATE_HOME/skills-mcp/audit.db)
  --no-elicitation      never ask approvals through the client; use the configured fallback
  --approval-console    ask approvals on a local web page (127.0.0.1, secret URL) when the client cannot
                        show them (or with --no-elicitation); the page also lists recent calls
  --no-watch            do not reload skills when their files change
  --log-level LEVEL     trace | debug | info | warn | error | fatal | silent (default info)
  --http                serve Streamable HTTP instead of stdio
  --host ADDR           HTTP bind address (default 127.0.0.1); any other than loopback requires a token
  --port N              HTTP port (default 3333; 0 picks a free one, printed on stderr)
  --token-file FILE     file holding the bearer token HTTP clients must send (or SKILLS_MCP_TOKEN)

Environment: SKILLS_MCP_SKILLS (":"-separated), SKILLS_MCP_CONFIG, SKILLS_MCP_TOOLS, SKILLS_MCP_WORKSPACE,
SKILLS_MCP_AUDIT, SKILLS_MCP_LOG_LEVEL, SKILLS_MCP_NO_ELICITATION=1, SKILLS_MCP_TOKEN (HTTP bearer token).
Flags beat env, env beats the file.`,
  lint: `Usage: skills-mcp lint DIR… [--json]

Checks every skill under each DIR against the Agent Skills spec and skills-mcp's extensions.
Prints one finding per line as "path:line: rule: message" (warnings end in "(warning)").
Exits 1 when any finding is an error, 0 otherwise.

Options:
  --json                print the findings as JSON`,
  list: `Usage: skills-mcp list [--skills DIR…] [--config FILE] [--json]

Shows the skills that would be served: name, kind, tool name, origin and warnings, and the ones skipped.`,
  config: `Usage: skills-mcp config <claude-desktop|cursor|cline|vscode|claude-code> [--skills DIR…] [--name NAME] [--npx]
       skills-mcp config <client> --http URL [--name NAME]

Prints a configuration snippet for the client with absolute paths.
  --skills DIR          skills folder(s) to serve (default: the config's skills, else ./skills)
  --name NAME           server name in the client (default "skills")
  --npx                 launch with "npx -y skills-mcp" instead of this installation's node + cli path
  --http URL            connect to a running "skills-mcp --http" at URL (e.g. http://127.0.0.1:3333/mcp);
                        for a non-loopback URL the snippet carries an Authorization header to fill in`,
  run: `Usage: skills-mcp run <skill> [script] --input JSON|@file [--skills DIR…] [--config FILE] [-- args…]

Runs a skill's entry point (or one of its scripts) through the same pipeline as the server: policy, approval,
sandbox, audit. Approval is asked on the terminal (stderr + one line of stdin); without a terminal the configured
fallback applies. Prints the result on stdout and the call id on stderr. Exit 0 when the run succeeded, 1 otherwise.

  --input JSON|@file    the input (default {}); @file reads it from a file
  --skills DIR          skills folder (default: the config's skills, else ./skills)
  --audit PATH          audit database
  -- args…              arguments passed to the script (run_skill_script)`,
  audit: AUDIT_HELP.audit,
};
