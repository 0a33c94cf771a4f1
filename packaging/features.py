"""The wheel and the Node addon share one release build of every dependency (`make lint` runs this).

maturin and napi each run cargo for their own crate; cargo builds a dependency once per set of
features, so every crate both extensions use must resolve the same features in both (for the
host, the proc-macros and build scripts, too). `cargo tree` shows what each resolves; this fails,
naming the crates, when a feature turned on by one binding only would compile half the graph a
second time.

    python3 packaging/features.py [TARGET...]      (default: the host's; `make dist-all` builds others)
"""

from __future__ import annotations

import subprocess
import sys
from collections import defaultdict

PACKAGES = ["mcplens-python", "mcplens-node"]
# Every unit on its own line as `name version|features`.
TREE_FORMAT = ("--prefix", "none", "--no-dedupe", "--format", "{p}|{f}")


def host_target() -> str:
    out = subprocess.run(["rustc", "-vV"], capture_output=True, text=True, check=True).stdout
    return next(line.split(": ", 1)[1] for line in out.splitlines() if line.startswith("host: "))


def features(package: str, target: str) -> dict[str, set[str]]:
    """`name version` → the feature sets it is built with (one per host/target unit)."""
    out = subprocess.run(
        [*("cargo", "tree", "-p", package, "--target", target, "-e", "normal,build"), *TREE_FORMAT],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    found: dict[str, set[str]] = defaultdict(set)
    for line in out.splitlines():
        crate, _, feats = line.partition("|")
        found[" ".join(crate.split()[:2])].add(feats)
    return found


def main() -> int:
    failed = False
    for target in sys.argv[1:] or [host_target()]:
        python, node = (features(p, target) for p in PACKAGES)
        shared = sorted(set(python) & set(node))
        differ = [c for c in shared if python[c] != node[c]]
        for crate in differ:
            print(
                f"features: {target}: {crate}: {PACKAGES[0]} {sorted(python[crate])},",
                f"{PACKAGES[1]} {sorted(node[crate])}",
            )
        failed = failed or bool(differ)
        print(
            f"features: {target}: {PACKAGES[0]} and {PACKAGES[1]} build {len(shared)} shared crates",
            "with the same features",
        )
    if failed:
        print("features: give both bindings the same features of these crates", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
