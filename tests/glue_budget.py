"""Each binding's glue stays under a fifth of the core's code lines (the developers' guide).

Code lines: non-blank lines that are not only comment — `//`, `///`, `/* … */` blocks and JSDoc in
Rust and TypeScript; `#` comments and docstrings in Python. Glue: the binding's Rust (`src/*.rs`) and
its host-language facade (`python/mcplens/*.py`, `lib/*.ts`); tests, benchmarks, examples, stubs and
generated loaders are not glue. Run: `python3 tests/glue_budget.py` (part of `make test`; exit 1 when
a binding is over its limit).
"""

from __future__ import annotations

import io
import sys
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUDGET = 0.20
# Where a binding is still over the budget, its current share is the ceiling (a ratchet: glue may
# shrink, never grow back). Python: 21.7 % on 2026-12-01, with the `mcplens` command's entry point
# (24.7 % at the start of that round).
CEILING = {"python": 0.218}
GLUE = {
    "python": ["bindings-python/src/*.rs", "bindings-python/python/mcplens/*.py"],
    "node": ["bindings-node/src/*.rs", "bindings-node/lib/*.ts"],
}


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


def code_lines(path: Path) -> int:
    text = path.read_text()
    return python_lines(text) if path.suffix == ".py" else c_like_lines(text)


def main() -> int:
    core = sum(code_lines(p) for p in sorted((ROOT / "core/src").rglob("*.rs")))
    print(f"core/src: {core} code lines; budget per binding: {BUDGET:.0%} = {int(core * BUDGET)}")
    failed = False
    for name, patterns in GLUE.items():
        files = sorted(p for pattern in patterns for p in ROOT.glob(pattern))
        total = sum(code_lines(p) for p in files)
        share = total / core
        limit = CEILING.get(name, BUDGET)
        verdict = "within the budget" if share < BUDGET else f"OVER the budget (ceiling {limit:.1%})"
        detail = ", ".join(f"{p.relative_to(ROOT)} {code_lines(p)}" for p in files)
        print(f"{name}: {total} code lines = {share:.1%} of the core, {verdict} ({detail})")
        failed |= share >= limit
    if failed:
        print("a binding's glue grew past its limit: move rules to the core, remove glue")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
