#!/usr/bin/env bash
# Smoke run of the real MCP Inspector CLI (needs Node 22: run through the node npm package).
set -euo pipefail
cd "$(dirname "$0")/.."
inspect() {
  npx -y -p node@22 -p @modelcontextprotocol/inspector@2 -c \
    "inspector --cli --config inspector-configs/skills-mcp.json --server $1 --method $2" 2>/tmp/inspector.err
}
tools=$(inspect skills-stdio tools/list)
prompts=$(inspect skills-stdio prompts/list)
for name in read_skill_file commit-message csv-stats markdown-report markdown-toc; do
  grep -q "\"name\": \"$name\"" <<<"$tools" || { echo "inspector: tool $name missing"; cat /tmp/inspector.err; exit 1; }
done
for name in commit-message csv-stats markdown-report markdown-toc; do
  grep -q "\"name\": \"$name\"" <<<"$prompts" || { echo "inspector: prompt $name missing"; exit 1; }
done
echo "inspector: $(grep -c '"name":' <<<"$tools") tool names and $(grep -c '"name":' <<<"$prompts") prompt names listed over stdio"
