#!/usr/bin/env python3
"""Prints the hostile-server matrix (case by language) from the runners' result files.

    python3 tests/servers/hostile/summary.py [RESULTS_DIR]   # default .build/hostile

Each runner (core/tests/drivers/hostile_matrix.rs → rust.json, bindings-python/tests/test_hostile.py →
python-mcp1.json / python-mcp2.json and, over HTTP, python-mcp<N>-http.json; through
`fastmcp.Client` in the fastmcp environments, python-fastmcp<N>[-http].json,
bindings-node/__test__/hostile.test.mjs → node.json and, over HTTP, node-http.json) writes
one row per case: the expected outcome, the outcome, the time it took and the peak-RSS growth. A
cell reads `outcome  time  +RSS`, marked FAIL where the runner's checks failed (`xN`: traversals).
Exits 1 if any recorded row failed; a missing column (that suite did not run) is reported, not an
error.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
COLUMNS = ["rust", "python-mcp1", "python-mcp2", "node", "python-mcp1-http", "python-mcp2-http", "node-http"]
COLUMNS += [f"python-fastmcp{n}{t}" for t in ("", "-http") for n in (2, 3, 4)]  # through fastmcp.Client


def main() -> int:
    results = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parents[2] / ".build" / "hostile"
    cases = [c["case"] for c in json.loads((HERE / "cases.json").read_text())["cases"]]
    columns: dict[str, dict[str, dict]] = {}
    for name in COLUMNS:
        path = results / f"{name}.json"
        if path.exists():
            columns[name] = {row["case"]: row for row in json.loads(path.read_text())["rows"]}
    if not columns:
        print(f"hostile matrix: no results in {results} (run the Rust, Python and Node test suites first)")
        return 0

    def cell(row: dict | None) -> str:
        if row is None:
            return "-"
        if row.get("got") is None:
            return f"FAIL (no outcome; expected {row['expect']})"
        mark = "" if row.get("passed") else "FAIL "
        extra = f" x{row['traversals']}" if "traversals" in row else ""
        return f"{mark}{row['got']}{extra}  {row.get('elapsedMs', '?')} ms  +{row.get('rssGrowthMb', '?')} MB"

    header = ["case", *columns]
    lines = [header, ["---"] * len(header)]
    for case in cases:
        lines.append([case, *(cell(columns[c].get(case)) for c in columns)])
    print("Hostile-server matrix (outcome, time to outcome, peak-RSS growth of the client process):")
    for line in lines:
        print("| " + " | ".join(line) + " |")
    missing = [c for c in COLUMNS if c not in columns]
    if missing:
        print(f"(no results for: {', '.join(missing)})")
    failed = [(c, r["case"]) for c, rows in columns.items() for r in rows.values() if not r.get("passed")]
    for c, case in failed:
        print(f"FAILED: {c} / {case}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
