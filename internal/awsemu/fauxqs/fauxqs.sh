#!/usr/bin/env bash
# Installs fauxqs 1.9.2 (an independent SQS emulator from npm, for Node 20) into a
# cache folder outside the work tree when missing, then runs it on 127.0.0.1.
# Prints "listening http://127.0.0.1:<port>" when ready; exits when stdin closes.
# Usage: fauxqs.sh [port]     Env: STOWAGE_CACHE (default ~/.cache/stowage)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cache="${STOWAGE_CACHE:-$HOME/.cache/stowage}/fauxqs"
if ! command -v node >/dev/null 2>&1; then
  echo "fauxqs.sh: node is not installed (Node 20 is required)" >&2
  exit 3
fi
if [ ! -f "$cache/node_modules/fauxqs/package.json" ]; then
  mkdir -p "$cache"
  npm install --prefix "$cache" --no-audit --no-fund --loglevel=error fauxqs@1.9.2 >&2
fi
exec node "$here/server.mjs" "$cache/node_modules" "${1:-0}"
