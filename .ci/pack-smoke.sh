#!/usr/bin/env bash
# Packs the npm tarball and runs its bin from a clean folder: checks `files` ships what users need.
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
tarball=$(npm pack --silent --pack-destination "$out" | tail -n 1)
tar -tzf "$out/$tarball" | sed 's|^package/||' | sort > "$out/files.txt"
grep -qx 'dist/cli.js' "$out/files.txt"
grep -qx 'skills/csv-stats/SKILL.md' "$out/files.txt"
if grep -qE '^(test|src|bench|scripts|\.ci)/' "$out/files.txt"; then echo "pack: test/src/bench/scripts/.ci must not ship (the set-up step is for a clone only)"; exit 1; fi
mkdir "$out/app" && cd "$out/app"
npm init -y >/dev/null
npm install --no-audit --no-fund "$out/$tarball" >/dev/null
npx skills-mcp --version
npx skills-mcp lint node_modules/skills-mcp/skills
# The bundled CLI from the installed layout: serving, the sandbox profiles, a gated run, the audit store.
npx skills-mcp --skills node_modules/skills-mcp/skills --no-watch </dev/null >serve.out 2>serve.err
test ! -s serve.out
npx skills-mcp doctor
printf 'approval:\n  mode: allow\n  fallback: rules-only\n' > policy.yaml
npx skills-mcp run csv-stats --skills node_modules/skills-mcp/skills --config policy.yaml --audit "$out/audit.db" \
  --input @node_modules/skills-mcp/skills/csv-stats/assets/example-input.json </dev/null | grep -q '"rows"'
npx skills-mcp audit verify --audit "$out/audit.db"
if grep -qE '^dist/(cli|sandbox|audit)/' "$out/files.txt"; then echo "pack: only the bundle ships from dist/"; exit 1; fi
echo "pack: $(wc -l < "$out/files.txt") files in $tarball"
