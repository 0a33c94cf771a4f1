#!/usr/bin/env python3
"""No dependency cycles between the core's top-level modules (`make lint`).

A module depends on another when its code (comments, doc comments and `#[cfg(test)]` items left
out) names it by a `crate::` path, `use crate::{...}` groups included. The check fails on every
cycle, naming the edges that close it. Cycles inside one module (`tracking/*` between its own
files) are that module's business and are not seen here.

Run: python3 tests/module_cycles.py
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

SRC = Path(__file__).resolve().parents[1] / "core" / "src"


def strip(text: str) -> str:
    """The code: comments, string literals' contents and `#[cfg(test)]` items removed."""
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'r#*"(?:.|\n)*?"#*|"(?:\\.|[^"\\])*"', '""', text)
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]", text):
        if m.start() < i:
            continue
        out.append(text[i : m.start()])
        j = text.find("{", m.end())
        semi = text.find(";", m.end())
        if semi != -1 and (j == -1 or semi < j):  # `#[cfg(test)] use …;` or `mod tests;`
            i = semi + 1
            continue
        depth = 0
        for k in range(j, len(text)):
            depth += {"{": 1, "}": -1}.get(text[k], 0)
            if depth == 0:
                i = k + 1
                break
    out.append(text[i:])
    return "".join(out)


def expand(group: str) -> list[str]:
    """`a::{b, c::{d}}` → the first segment of each path: what `use crate::…` names."""
    return [p.split("::")[0].strip().split(" as ")[0] for p in split_top(group) if p.strip()]


def split_top(group: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in group:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return parts


def top_module(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".rs")


def reexports() -> dict[str, str]:
    """The crate root's re-exports (`pub use catalog::Catalog;` in lib.rs): item → its module."""
    out: dict[str, str] = {}
    for m in re.finditer(r"pub use ([a-z_]+)::(\{[^}]*\}|[A-Za-z_][A-Za-z0-9_]*);", strip((SRC / "lib.rs").read_text())):
        for item in m.group(2).strip("{}").split(","):
            if item.strip():
                out[item.strip()] = m.group(1)
    return out


def edges() -> dict[str, dict[str, str]]:
    """module → {module it names: the first file that names it}."""
    modules = {top_module(p) for p in SRC.rglob("*.rs")} - {"lib"}
    root = reexports()
    deps: dict[str, dict[str, str]] = {m: {} for m in modules}
    for path in sorted(SRC.rglob("*.rs")):
        me = top_module(path)
        if me == "lib":
            continue
        code = strip(path.read_text(encoding="utf-8"))
        named: list[str] = []
        for m in re.finditer(r"crate::\{", code):
            depth, k = 0, m.end() - 1
            for k in range(m.end() - 1, len(code)):
                depth += {"{": 1, "}": -1}.get(code[k], 0)
                if depth == 0:
                    break
            named += expand(code[m.end() : k])
        named += re.findall(r"crate::([A-Za-z_][A-Za-z0-9_]*)", code)
        for other in (root.get(n, n) for n in named):
            if other in modules and other != me:
                deps[me].setdefault(other, str(path.relative_to(SRC.parent.parent)))
    return deps


def cycles(deps: dict[str, dict[str, str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in deps[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(deps):
        if v not in index:
            visit(v)
    return found


def main() -> int:
    deps = edges()
    found = cycles(deps)
    for comp in found:
        inner = [f"{a} → {b} ({deps[a][b]})" for a in comp for b in sorted(deps[a]) if b in comp]
        print(f"module cycle {' ↔ '.join(comp)}:\n  " + "\n  ".join(inner))
    if found:
        print("the core's modules must depend one way: move the shared item to the module both use")
        return 1
    print(f"core modules: {len(deps)}, no dependency cycle between them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
