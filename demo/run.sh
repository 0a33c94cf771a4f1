#!/usr/bin/env bash
# make demo: the whole mission on embedded defaults. Called by the Makefile after the build, with
#   $1 = the Python interpreter of a venv holding mcp and the mcplens wheel, $2 = the mcplens CLI,
#   $3 (optional) = the Rust `discover` example to run as step 5.
# It ends by writing the HTML report of the demo server's own events to .build/demo-report.html.
set -euo pipefail
python=$1
cli=$2
discover=${3:-}
root=$(cd "$(dirname "$0")/.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"   # the tracked server writes ./mcplens-events.jsonl here

echo "== 1. A Node agent discovers a tracked Python MCP server's templates through an mcplens Catalog"
node "$root/demo/agent.mjs" "$python" "$root/demo/server.py"

echo
echo "== 2. What the server's tracker recorded (mcplens events summary)"
"$cli" events summary mcplens-events.jsonl

echo
echo "== 3. mcplens templates against @modelcontextprotocol/server-everything"
"$cli" templates --server everything -- node "$root/node_modules/@modelcontextprotocol/server-everything/dist/index.js" stdio

echo
echo "== 4. mcplens check: what clients will drop or refuse from the demo server"
"$cli" check --server notes -- "$python" "$root/demo/server.py"

if [ -n "$discover" ]; then
    echo
    echo "== 5. The Rust driver (rmcp) against a well-behaved and a hostile in-process server"
    "$discover"
fi

echo
echo "== 6. The report of everything the demo server recorded (mcplens events report)"
mkdir -p "$root/.build"
report="$root/.build/demo-report.html"
"$cli" events report mcplens-events.jsonl -o "$report" --progress never
echo
echo "demo: done"
echo "report of the demo's own events: $report"
