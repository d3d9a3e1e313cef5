/** Help texts. The README's CLI reference is generated from these (`npm run check` fails on drift). */
export const HELP: Record<string, string> = {
  main: `skills-mcp — serve folders of Agent Skills (SKILL.md + scripts) over MCP

Usage:
  skills-mcp [serve] --skills DIR [--skills DIR…] [options]   serve over stdio (default command)
  skills-mcp lint DIR…                                        check skills against the Agent Skills spec
  skills-mcp list [--skills DIR…]                             show the skills that would be served
  skills-mcp config <client> [--skills DIR…]                  print a config snippet for an MCP client
  skills-mcp doctor                                           check the sandbox, Node and interpreters

Run "skills-mcp <command> --help" for a command's options.
Options for every command: --help, --version.
Exit codes: 0 ok, 1 failure (e.g. lint errors), 2 usage or configuration error.`,
  serve: `Usage: skills-mcp [serve] --skills DIR [options]

Serves the skills in DIR over MCP on stdin/stdout (both protocol eras). Logs go to stderr.
Stops when stdin closes, or on SIGINT/SIGTERM.

Options:
  --skills DIR          skills folder; repeatable; the first root wins on duplicate names
  --config FILE         config file (default: ./skills-mcp.yaml when present)
  --tools MODE          per-skill | compact | auto (default auto: per-skill up to 30 skills)
  --workspace DIR       a folder skills may read at the same path inside the sandbox
  --audit PATH          audit database (default $XDG_STATE_HOME/skills-mcp/audit.db)
  --no-elicitation      never ask approvals through the client; use the configured fallback
  --no-watch            do not reload skills when their files change
  --log-level LEVEL     trace | debug | info | warn | error | fatal | silent (default info)

Environment: SKILLS_MCP_SKILLS (":"-separated), SKILLS_MCP_CONFIG, SKILLS_MCP_TOOLS, SKILLS_MCP_WORKSPACE,
SKILLS_MCP_AUDIT, SKILLS_MCP_LOG_LEVEL, SKILLS_MCP_NO_ELICITATION=1. Flags beat env, env beats the file.`,
  lint: `Usage: skills-mcp lint DIR… [--json]

Checks every skill under each DIR against the Agent Skills spec and skills-mcp's extensions.
Prints one finding per line as "path:line: rule: message" (warnings end in "(warning)").
Exits 1 when any finding is an error, 0 otherwise.

Options:
  --json                print the findings as JSON`,
  list: `Usage: skills-mcp list [--skills DIR…] [--config FILE] [--json]

Shows the skills that would be served: name, kind, tool name, origin and warnings, and the ones skipped.`,
  config: `Usage: skills-mcp config <claude-desktop|cursor|cline|vscode|claude-code> [--skills DIR…] [--name NAME] [--npx]

Prints a configuration snippet for the client with absolute paths.
  --skills DIR          skills folder(s) to serve (default: the config's skills, else ./skills)
  --name NAME           server name in the client (default "skills")
  --npx                 launch with "npx -y skills-mcp" instead of this installation's node + cli path`,
};
