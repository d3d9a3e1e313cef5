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
if grep -qE '^(test|src|bench|\.ci)/' "$out/files.txt"; then echo "pack: test/src/bench/.ci must not ship"; exit 1; fi
mkdir "$out/app" && cd "$out/app"
npm init -y >/dev/null
npm install --no-audit --no-fund "$out/$tarball" >/dev/null
npx skills-mcp --version
npx skills-mcp lint node_modules/skills-mcp/skills
echo "pack: $(wc -l < "$out/files.txt") files in $tarball"
