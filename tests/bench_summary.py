"""The table that ends `make bench`: each figure of issues 31 and 47 (performance) against its goal.

A benchmark reports a row by writing `<row>.json` ({"row", "figure", "detail", "enforced"?}; a row
measured more than once, per SDK line say, as `<row>.<which>.json`: the worst figure is shown) into
the directory named by MCPLENS_BENCH_RESULTS (the Makefile empties it at the start of `make bench`).
A row no benchmark reported in this run is shown as not measured, never guessed. A row marked
`enforced` (a deterministic figure, such as callgrind's instruction ratio) fails `make bench` when it
misses its goal, after the whole table is printed; `enforced` as a number fails it only over that
bound (a regression guard looser than a goal not reached yet). A row may carry its floor measured in
the same run as `"floor"` (text), printed beside the goal. A row whose goal has a part measured in the same
run (below the incumbents, say) carries it as `"also": [[what, met], ...]`: met only if all are. To
add a row: add it to ROWS here and have its benchmark write the file.
"""

import json
import sys
from pathlib import Path

# (row, figure, goal as printed, the goal as a bound on the figure). Order: the table.
ROWS = [
    (
        "core_page",
        "core pager, one 42 KB / 100-template page, instructions (callgrind) ÷ serde_json::Value parse",
        "≤ 0.42",
        0.42,
    ),
    (
        "node_discovery_stdio",
        "Node, 100 × 100 templates, mcplens ÷ the SDK's loop — stdio",
        "≤ 1.1×",
        1.1,
    ),
    (
        "node_discovery_memory",
        "Node, 100 × 100 templates, mcplens ÷ the SDK's loop — in memory",
        "≤ 1.5×",
        1.5,
    ),
    (
        "node_discovery_long_stdio",
        "Node, 5 × 100 templates, 2,000-char descriptions — stdio",
        "≤ 1.1×",
        1.1,
    ),
    (
        "node_discovery_long_memory",
        "Node, 5 × 100 templates, 2,000-char descriptions — in memory",
        "≤ 1.5×",
        1.5,
    ),
    (
        "python_discovery",
        "Python, ~1 MB workload in memory ÷ the SDK's typed loop (worst workload)",
        "≤ 0.8×",
        0.8,
    ),
    (
        "node_tracking",
        "Node track(): added p50 of tools/call in memory (µs)",
        "≤ +3 µs, below agentcat and @posthog/mcp",
        3.0,
    ),
    (
        "node_tracking_stdio",
        "Node track(): added p50 of tools/call over stdio ÷ the untracked p50",
        "≤ 0.05 (noise), below agentcat and @posthog/mcp",
        0.05,
    ),
    (
        "python_tracking",
        "Python track(): added CPU at the handler ÷ the glue floor in the same run (worst major)",
        "≤ 1.2×",
        1.2,
    ),
    (
        "python_convert_values",
        "Python convert/values.rs: a page read in place ÷ handed over as JSON text, in memory (worst)",
        "< 1×",
        0.999,
    ),
    (
        "node_convert_listing",
        "Node convert/listing.rs + lib/convert.ts: the listing from its parts ÷ JSON.parse of its text, in memory (worst)",
        "< 1×",
        0.999,
    ),
    (
        "node_convert_page",
        "Node convert/tape.rs + lib/convert.ts: pages read from their tapes ÷ pages as JSON.stringify'd text, in memory (worst)",
        "< 1×",
        0.999,
    ),
    (
        "python_convert_tracking",
        "Python convert/json.rs: track() with responses over the floor ÷ pydantic's serializer alone",
        "< 1×",
        0.999,
    ),
    (
        "python_incumbents",
        "Python track(): added p50 end to end (FastMCP 1.x, MCPServer 2.x) ÷ the lower incumbent's",
        "< 1 (below agentcat and posthog.mcp)",
        0.999,
    ),
    (
        "proxy_latency",
        "mcplens proxy: added p50 per relayed tools/call over stdio, vs direct (µs)",
        "≤ +100 µs",
        100.0,
    ),
    (
        "proxy_over_relay",
        "mcplens proxy (tracked): p50 over a bare relay, median of interleaved rounds (µs)",
        "≤ +25 µs, CPU per call ≤ 1.5× the relay's",
        25.0,
    ),
]


def main() -> int:
    results = Path(sys.argv[1])
    found = {}
    for path in sorted(results.glob("*.json")) if results.is_dir() else []:
        row = json.loads(path.read_text())
        # A row measured more than once (one file per SDK line, say) shows its worst figure.
        seen = found.get(row["row"])
        if seen is not None:
            worst, other = (
                (row, seen)
                if float(row["figure"]) > float(seen["figure"])
                else (seen, row)
            )
            row = {
                **worst,
                "detail": f"{worst['detail']}; {other['figure']:g} for {other['detail']}",
            }
        found[row["row"]] = row
    unknown = sorted(set(found) - {r[0] for r in ROWS})
    if unknown:
        print(
            f"bench summary: rows not in the table: {', '.join(unknown)}",
            file=sys.stderr,
        )
        return 1
    table = [("figure", "measured", "goal", "", "floor in this run")]
    missed = []
    for key, figure, goal, bound in ROWS:
        row = found.get(key)
        if row is None:
            table.append((figure, "not measured by make bench yet", goal, "", ""))
            continue
        value = float(row["figure"])
        also = row.get("also", [])
        met = value <= bound and all(ok for _, ok in also)
        if also:
            row = {**row, "detail": f"{row['detail']}; " + ", ".join(f"{what}: {'yes' if ok else 'NO'}" for what, ok in also)}
        table.append(
            (figure, f"{value:g} ({row['detail']})", goal, "met" if met else "NOT MET", row.get("floor", ""))
        )
        enforced = row.get("enforced")
        if enforced is True and not met:
            missed.append(f"{key} ({value:g}, goal {goal})")
        elif isinstance(enforced, (int, float)) and not isinstance(enforced, bool) and value > enforced:
            missed.append(f"{key} ({value:g}, over its guard {enforced:g})")
    widths = [max(len(r[i]) for r in table) for i in range(5)]
    print("\n== make bench: summary against the goals of issues 31 and 47")
    for r in table:
        print("  " + "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    if missed:
        print(
            f"make bench: deterministic goal missed: {', '.join(missed)}",
            file=sys.stderr,
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
