#!/usr/bin/env python3
"""No dependency cycle between any two modules of the core (`make lint`).

Every file of `core/src` is a module (`lib.rs` the crate, `a/mod.rs` and `a.rs` the module `a`,
`a/b.rs` the module `a::b`); an inline `mod x { … }` counts as part of its file. A module depends
on another when its code names an item of it: a path through `crate::`, `super::`, `self::` or a
child module, in a `use` or in the code, followed through re-exports (`pub use`) to the module
that defines the item. Re-export statements themselves are not dependencies (they are the
module's surface, not its code), nor are `mod` declarations; comments, string literals and
`#[cfg(test)]` items are left out. The check fails on every cycle, naming the edges that close it.

The same walk checks the layering the crate's doc states: a rule module (anything but the
drivers, `rmcp`, `tracking::runtime` and `catalog::shared`) depends on no driver, and its code never reads a clock,
spawns, or touches a file, socket or process (`Instant::now`, `SystemTime::now`, `std::thread`,
`std::fs`, `std::net`, `std::process`, `tokio`, an HTTP agent).

Why not cargo-modules (0.27, the newest this toolchain builds): its `--acyclic` checks the item
graph whatever the filters say, so `impl A { fn new() -> A }` is a cycle (`A` ↔ `A::new`) in any
crate; and with `--no-fns` it no longer sees the module cycles that go through functions.

Run: python3 tests/module_cycles.py [SRC]   (SRC: another tree, e.g. an older commit's core/src)
     python3 tests/module_cycles.py cli/src --cycles-only   (a driver crate: cycles only)
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ARGS = [a for a in sys.argv[1:] if not a.startswith("--")]
SRC = Path(ARGS[0]).resolve() if ARGS else Path(__file__).resolve().parents[1] / "core" / "src"
# `--cycles-only`: a driver crate (the CLI's `cli/src`), whose modules do I/O by design.
CYCLES_ONLY = "--cycles-only" in sys.argv
Mod = tuple[str, ...]


# One pass, left to right, so that each construct is read where it starts: a `//` inside a string
# is not a comment, a `"` inside a comment or a char literal does not open a string, and a raw
# string ends at its own `"#…`.
LEXEMES = re.compile(
    r"(?P<raw>(?<![\w])b?r(?P<hashes>#*)\".*?\"(?P=hashes))"
    r"|(?P<str>b?\"(?:\\.|[^\"\\])*\")"
    r"|(?P<chr>b?'(?:\\.|[^'\\])')"
    r"|(?P<comment>//[^\n]*|/\*.*?\*/)",
    re.S,
)


def strip(text: str) -> str:
    """The code: comments, string literals' contents and `#[cfg(test)]` items removed."""
    text = LEXEMES.sub(lambda m: '""' if m["raw"] or m["str"] else "' '" if m["chr"] else "", text)
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


def module_of(path: Path) -> Mod:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    if parts[-1] in ("lib", "mod"):
        parts.pop()
    return tuple(parts)


def split_top(group: str) -> list[str]:
    parts, depth, cur = [], 0, ""
    for ch in group:
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def use_paths(tree: str) -> list[tuple[list[str], str]]:
    """`a::{b, c::{d as e}, f::*}` → ([segments], the name it binds) for each leaf."""
    tree = re.sub(r"\s+", " ", tree).strip()
    brace = tree.find("{")
    if brace == -1:
        path, _, alias = tree.partition(" as ")
        segs = [s.strip() for s in path.split("::") if s.strip()]
        return [(segs, alias.strip() or segs[-1])]
    head = [s.strip() for s in tree[:brace].split("::") if s.strip()]
    out = []
    for part in split_top(tree[brace + 1 : tree.rindex("}")]):
        for segs, name in use_paths(part):
            out.append((head + segs if segs != ["self"] else head, name if segs != ["self"] else head[-1]))
    return out


# `catalog::shared` is the hosts' side of a catalog (its lock, its one driver, the process's seed).
DRIVERS: list[Mod] = [("rmcp",), ("tracking", "runtime"), ("catalog", "shared")]
EFFECTS = re.compile(r"\b(?:Instant::now|SystemTime::now|std::thread|thread::spawn|std::fs|std::net|std::process|tokio::|ureq::Agent)\b")

USE = re.compile(r"\b(pub(?:\([^)]*\))?\s+)?use\s+([^;]+);")


class Crate:
    def __init__(self) -> None:
        self.code: dict[Mod, str] = {}
        self.files: dict[Mod, str] = {}
        for path in sorted(SRC.rglob("*.rs")):
            m = module_of(path)
            self.code[m] = strip(path.read_text(encoding="utf-8"))
            self.files[m] = str(path.relative_to(SRC.parent.parent))
        # name → path, per module: what its `pub use` statements re-export (`*` for globs).
        self.reexports: dict[Mod, dict[str, list[str]]] = {m: {} for m in self.code}
        for m, code in self.code.items():
            for u in USE.finditer(code):
                if u.group(1):
                    for segs, name in use_paths(u.group(2)):
                        self.reexports[m][name if segs[-1] != "*" else "*" + "::".join(segs)] = segs

    def is_module(self, m: Mod) -> bool:
        return m in self.code

    def resolve(self, here: Mod, segs: list[str], depth: int = 0) -> Mod | None:
        """The module that defines what `segs` (a path written in `here`) names; None: outside."""
        if depth > 16 or not segs:
            return None
        cur: Mod
        rest = list(segs)
        if rest[0] == "crate":
            cur, rest = (), rest[1:]
        elif rest[0] in ("super", "self"):
            cur = here
            while rest and rest[0] in ("super", "self"):
                cur = cur[:-1] if rest[0] == "super" else cur
                rest = rest[1:]
        elif self.is_module(here + (rest[0],)):
            cur = here
        else:
            return None  # std, a dependency, or a local name
        while rest and self.is_module(cur + (rest[0],)):
            cur, rest = cur + (rest[0],), rest[1:]
        if not rest or rest[0] == "*":
            return cur
        target = self.reexports[cur].get(rest[0])
        if target is not None:
            found = self.resolve(cur, target + rest[1:], depth + 1)
            return found if found is not None else cur
        return cur

    def edges(self) -> dict[Mod, dict[Mod, str]]:
        deps: dict[Mod, dict[Mod, str]] = {m: {} for m in self.code}
        for m, code in self.code.items():
            paths: list[list[str]] = []
            body = USE.sub(lambda u: "" if u.group(1) else u.group(0), code)  # re-exports out
            for u in USE.finditer(body):
                paths += [segs for segs, _ in use_paths(u.group(2))]
            body = USE.sub("", body)
            for p in re.finditer(r"\b(?:crate|super|self|[a-z_][a-z0-9_]*)(?:::[A-Za-z_][A-Za-z0-9_]*)+", body):
                paths.append(p.group(0).split("::"))
            for segs in paths:
                target = self.resolve(m, segs)
                if target is not None and target != m:
                    deps[m].setdefault(target, self.files[m])
        return deps


def cycles(deps: dict[Mod, dict[Mod, str]]) -> list[list[Mod]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[Mod, int] = {}
    low: dict[Mod, int] = {}
    stack: list[Mod] = []
    on: set[Mod] = set()
    found: list[list[Mod]] = []

    def visit(v: Mod) -> None:
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


def is_driver(m: Mod) -> bool:
    return any(m[: len(d)] == d for d in DRIVERS)


def layering(crate: Crate, deps: dict[Mod, dict[Mod, str]]) -> list[str]:
    """A rule module that depends on a driver, or does what only drivers do."""
    out = []
    for m in sorted(deps):
        if is_driver(m):
            continue
        out += [f"{name(m)} → {name(d)}: a rule module depends on a driver" for d in sorted(deps[m]) if is_driver(d)]
        out += [f"{name(m)} ({crate.files[m]}): `{e}` in a rule module" for e in sorted(set(EFFECTS.findall(crate.code[m])))]
    return out


def name(m: Mod) -> str:
    return "::".join(("crate",) + m)


def main() -> int:
    crate = Crate()
    deps = crate.edges()
    found = cycles(deps)
    for comp in found:
        inner = [f"{name(a)} → {name(b)} ({deps[a][b]})" for a in comp for b in sorted(deps[a]) if b in comp]
        print(f"module cycle {' ↔ '.join(map(name, comp))}:\n  " + "\n  ".join(inner))
    if found:
        print("a crate's modules must depend one way: move the shared item to the module both use")
    layers = [] if CYCLES_ONLY else layering(crate, deps)
    for line in layers:
        print(line)
    if layers:
        print("rules are sans-IO: time and randomness come in from the driver")
    if found or layers:
        return 1
    n = sum(map(len, deps.values()))
    if CYCLES_ONLY:
        print(f"{SRC}: {len(deps)} modules, {n} dependencies between them, no cycle")
    else:
        print(f"core modules: {len(deps)}, {n} dependencies between them, no cycle; rule modules use no driver")
    return 0


if __name__ == "__main__":
    sys.exit(main())
