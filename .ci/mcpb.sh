#!/usr/bin/env bash
# The MCP Bundle for Claude Desktop: built by `npm run bundle:mcpb` (which validates the manifest with `mcpb validate`),
# unpacked, checked to hold no native module and the same skills and sandbox profiles as the package, then run as
# the host would on Node 22 and 24 (from the npm registry), and the audit log it wrote verified on node:sqlite.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
npm run --silent bundle:mcpb -- "$out/skills-mcp.mcpb"
npx mcpb validate build/mcpb/manifest.json
npx mcpb unpack "$out/skills-mcp.mcpb" "$out/unpacked" >/dev/null
if find "$out/unpacked" -name '*.node' | grep .; then echo "mcpb: the bundle holds a native module"; exit 1; fi
diff -r skills "$out/unpacked/server/skills"
diff -r sandbox-profiles "$out/unpacked/server/sandbox-profiles"
echo "mcpb: $(find "$out/unpacked" -type f | wc -l) files, $(du -k "$out/skills-mcp.mcpb" | cut -f1) KiB packed, no native module"
for v in 22 24; do
  node_bin=$(npx -y -p "node@$v" node -e 'console.log(process.execPath)')
  printf -- '-- Node %s --\n' "$("$node_bin" -v)"
  node .ci/mcpb-smoke.mjs "$out/unpacked" "$node_bin"
done
