#!/usr/bin/env bash
# The whole CI script on another Node line: `.ci/on-node.sh 24 /path/to/clean/clone` fetches that Node from the npm
# registry (the node-linux-<arch> package: the binary and its headers, include/node), puts it first on PATH and
# points node-gyp at its headers (npm_config_nodedir), so that `npm install` in .ci/run builds better-sqlite3 for it
# from source when no prebuilt binary can be downloaded. Then runs .ci/run in that clone. CI itself runs .ci/run on
# Node 20 only; this shows the other lines (docs/testing.md).
set -euo pipefail
v="${1:?usage: .ci/on-node.sh <node major, e.g. 24> [clean clone, default this checkout]}"
clone="$(cd "${2:-$(dirname "$0")/..}" && pwd)"
# A node_modules left by an install on another Node holds better-sqlite3 built for that one.
if [ -e "$clone/node_modules" ]; then
  echo "on-node: $clone has a node_modules already: run this in a fresh clone (git clone -q <repo> <dir>)" >&2
  exit 1
fi
case "$(uname -m)" in x86_64) arch=x64 ;; aarch64) arch=arm64 ;; *) arch="$(uname -m)" ;; esac
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
# Readable by every user, as a system Node is: tests run the server and its workspace worker as an ordinary user.
chmod 755 "$home"
npm install --prefix "$home" --no-save --no-package-lock --no-audit --no-fund --silent "node-linux-$arch@$v"
nodedir="$home/node_modules/node-linux-$arch"
[ -f "$nodedir/include/node/common.gypi" ] || { echo "on-node: node-linux-$arch@$v has no include/node" >&2; exit 1; }
export PATH="$nodedir/bin:$PATH" npm_config_nodedir="$nodedir"
[ "$(node -p 'process.versions.node.split(".")[0]')" = "$v" ] || { echo "on-node: node on PATH is $(node -v)" >&2; exit 1; }
echo "on-node: Node $(node -v) ($(command -v node)), npm $(npm -v), headers $nodedir/include/node"
cd "$clone"
bash .ci/run
