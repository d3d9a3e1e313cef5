#!/usr/bin/env bash
# The MCP Inspector's web app, driven in headless Chromium (playwright-core), approves, denies, declines and
# dismisses a csv-stats run against the built binary over stdio and Streamable HTTP, legacy and modern era; the
# audit log records each answer distinctly. Screenshots (1280x800) go to $INSPECTOR_WEB_ARTIFACTS (default
# test-artifacts/inspector-web). The Inspector needs Node 22: it runs through the `node` npm package.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f dist/cli.js ] || { echo "inspector-web: dist/cli.js is missing: build first (npm run build)" >&2; exit 1; }
node .ci/inspector-web.mjs "${INSPECTOR_WEB_ARTIFACTS:-test-artifacts/inspector-web}"
