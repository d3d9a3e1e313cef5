#!/usr/bin/env bash
# Runs the sandbox security suite three ways (called by .ci/run, as root, after `npm ci` and the build):
#   1. with the server as root,
#   2. with the server as an ordinary user created here (a copy of the repo in that user's home, because
#      /root is mode 700 and the suite must not depend on root-only paths),
#   3. with the adapter forced unavailable (SKILLS_MCP_TEST_FORCE_NO_SANDBOX=1, read only by the test
#      harness): every case must end in SANDBOX_DENIED with its canaries untouched.
# Each run prints its results table. Exits non-zero on any breach or failed test.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CI_USER="${SKILLS_MCP_CI_USER:-skillsci}"
cd "$REPO"

if [ "$(id -u)" -ne 0 ]; then
  echo "security.sh: run as root (it creates the ordinary user)" >&2
  exit 2
fi
# bubblewrap, python3, setpriv and strace (it judges one case: what the server itself opened): the project's
# set-up step installs them (a no-op after `npm test`).
node scripts/setup.mjs test

status=0
run() {
  local label="$1"
  shift
  echo
  echo "=== security suite: ${label} ==="
  if "$@"; then
    echo "=== ${label}: passed ==="
  else
    echo "=== ${label}: FAILED ===" >&2
    status=1
  fi
}

run "server as root" npm run --silent test:security

if ! id "$CI_USER" >/dev/null 2>&1; then
  useradd --create-home --shell /bin/bash "$CI_USER"
fi
USER_HOME="$(getent passwd "$CI_USER" | cut -d: -f6)"
rm -rf "$USER_HOME/repo"
mkdir -p "$USER_HOME/repo"
tar -C "$REPO" --exclude=./.git -cf - . | tar -C "$USER_HOME/repo" -xf -
chown -R "$CI_USER:" "$USER_HOME/repo"
# The Node running this script, first on the user's PATH when it is not a system one (.ci/on-node.sh's Node 22 or 24,
# in a folder every user can read): the tree's better-sqlite3 was built for it, not for /usr/bin/node.
user_path=/usr/local/bin:/usr/bin:/bin
node_dir="$(dirname "$(command -v node)")"
case ":$user_path:" in *":$node_dir:"*) ;; *) user_path="$node_dir:$user_path" ;; esac
run "server as ordinary user ${CI_USER}" \
  runuser -u "$CI_USER" -- env -i HOME="$USER_HOME" PATH="$user_path" LANG=C.UTF-8 \
  bash -c 'cd "$HOME/repo" && npm run --silent test:security'

run "adapter forced unavailable" env SKILLS_MCP_TEST_FORCE_NO_SANDBOX=1 npm run --silent test:security

echo
if [ "$status" -eq 0 ]; then
  echo "security suite: all three runs passed (no breach)"
else
  echo "security suite: FAILED (see above)" >&2
fi
exit "$status"
