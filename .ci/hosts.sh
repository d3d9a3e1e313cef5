#!/usr/bin/env bash
# Real agent hosts against the built server: Claude Code, Codex CLI and Gemini CLI, installed from the npm registry
# into a throwaway prefix (pinned versions; nothing cached), each with a throwaway HOME.
# - Claude Code: the whole round in its TUI (tmux) and print mode, against a fake Messages API (.ci/hosts/).
# - Codex CLI: the snippet `skills-mcp config codex` prints, accepted by `codex mcp list`; the round in its TUI
#   (tmux) and `codex exec`, against a fake Responses API (.ci/hosts/).
# - Gemini CLI: the snippet `skills-mcp config gemini` prints, accepted by `gemini mcp list`; its headless mode,
#   against a fake Gemini API, gets the refusal (it shows no approval forms).
# Screens go to ${CI_ARTIFACTS:-/tmp/ci-artifacts}/hosts as text and PNG, and into this log.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f dist/cli.js ] || { echo "hosts: dist/cli.js is missing: build first (npm run build)" >&2; exit 1; }
# tmux is this step's alone (npm test does not need it), so it is not among scripts/setup.mjs's prerequisites.
if ! command -v tmux >/dev/null; then
  echo "hosts: installing tmux (apt-get install -y tmux)"
  apt-get install -y -qq tmux >/dev/null || { echo "hosts: tmux is missing: apt-get install tmux" >&2; exit 1; }
fi

CLAUDE_CODE=2.1.332 CODEX=0.171.0 GEMINI_CLI=0.61.0
artifacts="${CI_ARTIFACTS:-/tmp/ci-artifacts}/hosts"
prefix="$(mktemp -d /tmp/hosts-prefix-XXXXXX)"
homes="$(mktemp -d /tmp/hosts-homes-XXXXXX)" codex_homes="$(mktemp -d /var/tmp/hosts-codex-XXXXXX)"
trap 'rm -rf "$prefix" "$homes" "$codex_homes"' EXIT
mkdir -p "$artifacts"

step_started=$SECONDS
started=$SECONDS
npm install --prefix "$prefix" --no-audit --no-fund --loglevel=error \
  "@anthropic-ai/claude-code@$CLAUDE_CODE" "@openai/codex@$CODEX" "@google/gemini-cli@$GEMINI_CLI" >/dev/null
bin="$prefix/node_modules/.bin"
echo "hosts: installed Claude Code $CLAUDE_CODE, Codex $CODEX, Gemini CLI $GEMINI_CLI in $((SECONDS - started)) s"

started=$SECONDS
node .ci/hosts/claude-code.mjs "$bin" "$artifacts"
echo "hosts: Claude Code round took $((SECONDS - started)) s"

# Codex: config.toml holds what `skills-mcp config codex` prints; `codex mcp list`, the TUI round and `codex exec`.
# Its homes are not under /tmp: Codex will not put its helper links in a temporary folder.
started=$SECONDS
HOSTS_HOMES="$codex_homes" node .ci/hosts/codex-cli.mjs "$bin" "$artifacts"
echo "hosts: Codex round took $((SECONDS - started)) s"

# Gemini CLI: ~/.gemini/settings.json holds the snippet; it lists servers only in a folder the person trusted.
gemini_home="$homes/gemini" project="$homes/gemini/project"
mkdir -p "$gemini_home/.gemini" "$project"
node dist/cli.js config gemini --skills ./skills 2>/dev/null >"$gemini_home/.gemini/settings.json"
printf '{"%s": "TRUST_FOLDER"}\n' "$project" >"$gemini_home/.gemini/trustedFolders.json"
gemini_list="$(cd "$project" && HOME="$gemini_home" "$bin/gemini" mcp list 2>&1)"
echo "$gemini_list"
grep -q 'skills.*Connected' <<<"$gemini_list" || { echo "hosts: gemini mcp list does not show skills connected" >&2; exit 1; }
# Headless (`gemini -p`) against a fake Gemini API, signed in with an API key: no forms there, so a refusal.
node -e 'const fs = require("fs"), f = process.argv[1], s = JSON.parse(fs.readFileSync(f, "utf8"));
  fs.writeFileSync(f, JSON.stringify({ ...s, security: { auth: { selectedType: "gemini-api-key" } } }));' \
  "$gemini_home/.gemini/settings.json"
node .ci/hosts/gemini-cli.mjs "$bin" "$gemini_home"
node .ci/hosts/render-screens.mjs "$artifacts"
echo "hosts: done in $((SECONDS - step_started)) s; screens in $artifacts"
