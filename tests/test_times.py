"""Prints where `make test`'s (or `make check`'s) time went: each suite's wall time (in the order
they ran, each with whatever it had to build first), from the file the target writes
(`.build/test-times.tsv`, `.build/check-times.tsv`: `suite<TAB>seconds` per line; the target's
name is the file's, before `-times`).

    python3 tests/test_times.py .build/test-times.tsv [FAILED_SUITE]
"""

from __future__ import annotations

import sys
from pathlib import Path


def main() -> None:
    rows = [line.split("\t") for line in Path(sys.argv[1]).read_text().splitlines() if "\t" in line]
    times = [(name, int(seconds)) for name, seconds in rows]
    total = sum(s for _, s in times) or 1
    target = Path(sys.argv[1]).stem.removesuffix("-times")
    print(f"make {target}: where the time went (wall time, each suite with what it built first)")
    for name, seconds in times:
        print(f"  {name:<20} {seconds // 60:3d} min {seconds % 60:02d} s  {100 * seconds / total:5.1f} %")
    if len(sys.argv) > 2:
        print(f"  {sys.argv[2]:<20} (failed)")
    print(f"  {'total':<20} {total // 60:3d} min {total % 60:02d} s")


if __name__ == "__main__":
    main()
