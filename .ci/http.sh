#!/usr/bin/env bash
# Streamable HTTP end to end, against the built binary (run after the build): starts `skills-mcp --http` on a free
# loopback port, runs the MCP conformance suite (both releases, each against its committed baseline), the Skills
# extension scenarios, and the real Inspector CLI over HTTP in both protocol eras, then stops the server with
# SIGTERM and checks it stopped cleanly. The conformance suite and the Inspector need Node 22: they run through the
# `node` npm package.
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n== http: %s ==\n' "$*"; }
fail() {
  echo "http: $*" >&2
  exit 1
}
node22() { npx -y -p node@22 "$@"; }

[ -f dist/cli.js ] || fail "dist/cli.js is missing: build first (npm run build)"
work=$(mktemp -d)
server_pid=""
cleanup() {
  if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
    kill -TERM "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

step "start skills-mcp --http --port 0 (the chosen URL is logged on stderr)"
node dist/cli.js --http --port 0 --skills skills --no-watch --audit "$work/audit.db" 2>"$work/server.log" &
server_pid=$!
url=""
for _ in $(seq 1 100); do
  url=$(grep -o 'over Streamable HTTP at http://[^ ]*/mcp' "$work/server.log" | sed 's/.* at //' || true)
  [ -n "$url" ] && break
  kill -0 "$server_pid" 2>/dev/null || { cat "$work/server.log"; fail "the server exited before listening"; }
  sleep 0.1
done
[ -n "$url" ] || { cat "$work/server.log"; fail "the server did not log its URL"; }
echo "server pid $server_pid at $url"
node -e 'fetch(process.argv[1]).then(async (r) => { const b = await r.text(); console.log(r.status, b); process.exit(r.ok ? 0 : 1); })' \
  "${url%/mcp}/healthz"

step "conformance 0.1.16 (baseline conformance-baseline.yml)"
node22 -p @modelcontextprotocol/conformance@0.1.16 -c \
  "conformance server --url $url --expected-failures conformance-baseline.yml"

step "conformance 0.2.0-alpha.12, requirements 2026-07-28 (baseline conformance-baseline-2026-07-28.yml)"
node22 -p @modelcontextprotocol/conformance@0.2.0-alpha.12 -c \
  "conformance server --url $url --requirements 2026-07-28 --expected-failures conformance-baseline-2026-07-28.yml"

step "Skills extension scenarios (io.modelcontextprotocol/skills; a skipped check fails the run)"
for scenario in sep-2640-skills-directory sep-2640-skills-enumeration sep-2640-skills-manifest; do
  node22 -p @modelcontextprotocol/conformance@0.2.0-alpha.12 -c "conformance server --url $url --scenario $scenario" |
    tee "$work/$scenario.log"
  ! grep -q 'SKIPPED' "$work/$scenario.log" || fail "$scenario skipped checks: the extension is not declared"
  grep -q ', 0 failed, 0 warnings' "$work/$scenario.log" || fail "$scenario did not pass cleanly"
done

step "Inspector CLI lists tools over HTTP, legacy and modern era (inspector-configs/skills-mcp.json)"
# The committed entries name the default port; point them at the port this run picked.
node -e '
  const [src, dst, url] = process.argv.slice(1);
  const fs = require("node:fs");
  const config = JSON.parse(fs.readFileSync(src, "utf8"));
  for (const server of Object.values(config.mcpServers)) if (server.type === "http") server.url = url;
  fs.writeFileSync(dst, JSON.stringify(config, null, 2));
' inspector-configs/skills-mcp.json "$work/inspector.json" "$url"
for server in skills-http-legacy skills-http-modern; do
  tools=$(MCP_INSPECTOR_SECRET_STORE=memory node22 -p @modelcontextprotocol/inspector@2 -c \
    "inspector --cli --config $work/inspector.json --server $server --method tools/list" 2>"$work/inspector.err") ||
    { cat "$work/inspector.err"; fail "inspector failed for $server"; }
  for name in read_skill_file commit-message csv-stats markdown-report markdown-toc; do
    grep -q "\"name\": \"$name\"" <<<"$tools" || { cat "$work/inspector.err"; fail "$server: tool $name missing"; }
  done
  echo "inspector ($server): $(grep -c '^    {$' <<<"$tools" || true) tools listed: read_skill_file commit-message csv-stats markdown-report markdown-toc"
done

step "SIGTERM stops the server cleanly"
kill -TERM "$server_pid"
status=0
wait "$server_pid" || status=$?
server_pid=""
[ "$status" -eq 0 ] || { cat "$work/server.log"; fail "the server exited with $status after SIGTERM"; }
grep -q '"msg":"stopped"' "$work/server.log" || { cat "$work/server.log"; fail "no 'stopped' line in the server log"; }
if grep -q '"level":50' "$work/server.log"; then
  grep '"level":50' "$work/server.log"
  fail "the server logged errors"
fi
echo "http: all checks passed"
