"""Each binding's glue, counted by role (issue 45's decision): converters written for speed under
their own cap, everything else under a fifth of the core's rule code (the developers' guide).

Code lines: non-blank lines that are not only comment — `//`, `///`, `/* … */` blocks and JSDoc in
Rust and TypeScript; `#` comments and docstrings in Python.
- The core's rule code: `core/src/**/*.rs` without its `#[cfg(test)]` modules and without the rmcp
  drivers (`core/src/rmcp/`, a host driver like the bindings' own).
- A binding's glue: every file of it, recursively — its Rust crate (`src/**/*.rs`, `build.rs`) and
  its host-language package (`python/mcplens/**/*.py`; `lib/**/*.ts`, `*.mts`). Tests, benchmarks,
  examples, stubs (`.pyi`) and the napi-generated loader (`native.js`/`native.d.ts`) are not glue.
- Each file has one role: `convert` (converters written for speed, one module per binding, capped:
  Python 450 code lines, Node 300; each names the `make bench` row that prints what it saves
  against the plain path in the same run, shown here from the last `make bench` when there is
  one), `classes` (typed public classes), `drivers` (SDK drivers), `adapters` (agent frameworks),
  `plumbing` (entry points, re-exports, the CLI shim). A file of no known role fails the check;
  a file matches the first role listing it.
Run: `python3 tests/glue_budget.py` (part of `make lint`; exit 1 when a role is over its limit).
"""

from __future__ import annotations

import functools
import io
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET = 0.20
# Counted honestly from 2026-12-02 (every file of each binding), the whole glue against 20 % under a
# ratchet that went from Python 26.4 % / Node 23.8 % to 22.2 % / 19.5 % as rules moved into the
# core; issue 45 decided the count by role, with the converters written for speed apart under caps
# of their own (the ceiling went).
ROLES = {
    "python": {
        "convert": ["bindings-python/src/convert/**/*.rs"],
        "plumbing": ["bindings-python/python/mcplens/__init__.py", "bindings-python/python/mcplens/__main__.py",
                     "bindings-python/python/mcplens/_template.py", "bindings-python/src/cli.rs",
                     "bindings-python/build.rs"],
        "classes": ["bindings-python/src/*.rs"],
        "drivers": ["bindings-python/python/mcplens/_catalog.py", "bindings-python/python/mcplens/_mcp.py",
                    "bindings-python/python/mcplens/_tracking.py"],
        "adapters": ["bindings-python/python/mcplens/integrations/*.py"],
    },
    "node": {
        "convert": ["bindings-node/src/convert/**/*.rs", "bindings-node/lib/convert*.ts"],
        "plumbing": ["bindings-node/lib/index.ts", "bindings-node/lib/index.mts", "bindings-node/lib/template.ts",
                     "bindings-node/src/cli.rs", "bindings-node/build.rs"],
        "classes": ["bindings-node/src/*.rs"],
        "drivers": ["bindings-node/lib/catalog.ts", "bindings-node/lib/discovery.ts", "bindings-node/lib/tracking.ts"],
        "adapters": ["bindings-node/lib/ai.ts", "bindings-node/lib/ai.mts", "bindings-node/lib/openai-agents.ts",
                     "bindings-node/lib/openai-agents.mts"],
    },
}
# The converters' caps (code lines), and the `make bench` row that justifies each module.
CONVERT_CAP = {"python": 450, "node": 300}
CONVERT_ROWS = {
    "bindings-python/src/convert/values.rs": "python_convert_values",
    "bindings-python/src/convert/json.rs": "python_convert_tracking",
    "bindings-node/src/convert/listing.rs": "node_convert_listing",
    "bindings-node/src/convert/tape.rs": "node_convert_page",
    "bindings-node/lib/convert.ts": "node_convert_listing",
    "bindings-node/lib/convert-tape.ts": "node_convert_page",
}
BENCH_RESULTS = ROOT / ".build/bench"
GLUE = {
    "python": ["bindings-python/src/**/*.rs", "bindings-python/build.rs", "bindings-python/python/mcplens/**/*.py"],
    "node": ["bindings-node/src/**/*.rs", "bindings-node/build.rs", "bindings-node/lib/**/*.ts", "bindings-node/lib/**/*.mts"],
}
# Not rule code: the rmcp drivers (host drivers, as the bindings are).
NOT_RULES = ["core/src/rmcp"]


def c_like_lines(text: str) -> int:
    """Lines of Rust or TypeScript with code outside comments (string contents are not parsed:
    a `/*` inside a string literal would be misread, and none of ours has one)."""
    count, in_block = 0, False
    for line in text.splitlines():
        code, i = "", 0
        while i < len(line):
            if in_block:
                end = line.find("*/", i)
                if end < 0:
                    i = len(line)
                else:
                    in_block, i = False, end + 2
            elif line.startswith("//", i):
                break
            elif line.startswith("/*", i):
                in_block, i = True, i + 2
            else:
                code += line[i]
                i += 1
        count += bool(code.strip())
    return count


def python_lines(text: str) -> int:
    """Lines of Python holding a token other than a comment, a docstring or layout."""
    lines: set[int] = set()
    prev = tokenize.INDENT
    for tok in tokenize.generate_tokens(io.StringIO(text).readline):
        kind = tok.type
        if kind in (
            tokenize.COMMENT,
            tokenize.NL,
            tokenize.NEWLINE,
            tokenize.INDENT,
            tokenize.DEDENT,
        ):
            prev = kind if kind != tokenize.COMMENT else prev
            continue
        docstring = kind == tokenize.STRING and prev in (
            tokenize.INDENT,
            tokenize.NEWLINE,
            tokenize.DEDENT,
        )
        if not docstring:
            lines.update(range(tok.start[0], tok.end[0] + 1))
        prev = kind
    return len(lines)


def without_test_modules(text: str) -> str:
    """Rust source without its `#[cfg(test)]` top-level modules (rustfmt closes a top-level
    module with `}` alone at column 0)."""
    out, lines, i = [], text.splitlines(), 0
    while i < len(lines):
        if lines[i].strip() == "#[cfg(test)]" and i + 1 < len(lines) and lines[i + 1].startswith("mod "):
            if lines[i + 1].rstrip().endswith(";"):  # `mod tests;`: a file of its own, found below
                i += 2
                continue
            i += 2
            while i < len(lines) and lines[i] != "}":
                i += 1
            i += 1
            continue
        out.append(lines[i])
        i += 1
    return "\n".join(out)


def code_lines(path: Path) -> int:
    text = path.read_text()
    return python_lines(text) if path.suffix == ".py" else c_like_lines(text)


def rule_lines(path: Path) -> int:
    return c_like_lines(without_test_modules(path.read_text()))


def rule_files() -> list[Path]:
    return sorted(
        p
        for p in (ROOT / "core/src").rglob("*.rs")
        if not any(p.is_relative_to(ROOT / d) for d in NOT_RULES) and p.name != "tests.rs"
    )


def role_of(name: str, path: Path) -> str | None:
    """The first role whose patterns match `path` (`convert` and `plumbing` before the catch-alls)."""
    for role, patterns in ROLES[name].items():
        if any(path in matched(pattern) for pattern in patterns):
            return role
    return None


@functools.cache
def matched(pattern: str) -> frozenset[Path]:
    return frozenset(ROOT.glob(pattern))


def bench_row(row: str) -> str:
    """The row's figure from the last `make bench`, if it wrote one."""
    found = sorted(BENCH_RESULTS.glob(f"{row}.json")) + sorted(BENCH_RESULTS.glob(f"{row}.*.json"))
    if not found:
        return f"row {row}: not in .build/bench (run make bench)"
    import json

    rows = [json.loads(p.read_text()) for p in found]
    return "; ".join(f"row {r['row']}: {r['figure']} ({r.get('detail', '')})" for r in rows)


def main() -> int:
    core = sum(rule_lines(p) for p in rule_files())
    print(
        f"core rule code: {core} code lines (core/src without tests and {', '.join(NOT_RULES)}); "
        f"budget per binding outside convert: {BUDGET:.0%} = {int(core * BUDGET)}"
    )
    failed = False
    for name, patterns in GLUE.items():
        files = sorted({p for pattern in patterns for p in ROOT.glob(pattern) if p.is_file()})
        by_role: dict[str, list[Path]] = {role: [] for role in ROLES[name]}
        for p in files:
            role = role_of(name, p)
            if role is None:
                print(f"{name}: {p.relative_to(ROOT)} has no known role: add it to ROLES in tests/glue_budget.py")
                failed = True
            else:
                by_role[role].append(p)
        rest = sum(code_lines(p) for role, ps in by_role.items() if role != "convert" for p in ps)
        share = rest / core
        verdict = "within the budget" if share < BUDGET else "OVER the budget"
        print(f"{name}: {rest} code lines outside convert = {share:.2%} of the core, {verdict}")
        failed |= share >= BUDGET
        for role, ps in by_role.items():
            lines = sum(code_lines(p) for p in ps)
            detail = ", ".join(f"{p.relative_to(ROOT)} {code_lines(p)}" for p in ps)
            print(f"  {role:<9} {lines:>5}  ({detail or 'none'})")
        convert = sum(code_lines(p) for p in by_role["convert"])
        cap = CONVERT_CAP[name]
        print(f"  convert: {convert} of its cap of {cap} code lines" + ("" if convert <= cap else ": OVER"))
        failed |= convert > cap
        for p in by_role["convert"]:
            rel = str(p.relative_to(ROOT))
            if p.name == "mod.rs":
                continue
            row = CONVERT_ROWS.get(rel)
            if row is None:
                print(f"  {rel}: a converter with no bench row (CONVERT_ROWS): each must be justified by one")
                failed = True
            else:
                print(f"  {rel}: {bench_row(row)}")
    if failed:
        print("a binding's glue is past its limit: move rules to the core, remove glue")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
