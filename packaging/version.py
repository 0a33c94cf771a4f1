"""One version everywhere, from one place: `[workspace.package] version` in Cargo.toml.

    python3 packaging/version.py            print it
    python3 packaging/version.py check      every other place says the same (`make lint`, `make dist`)
    python3 packaging/version.py set X.Y.Z  write X.Y.Z into every place (then give CHANGELOG.md its section)

The Rust crates, the Python wheel (maturin reads the crate's version) and the CLI's `--version` take
it from Cargo directly. The places that cannot refer to it are written by `set` and compared by
`check`: the workspace's path dependencies (crates.io needs their version), the npm packages'
package.json (main and platform), the npm lockfile's entry for the workspace package, and the
CHANGELOG's newest section.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import tomllib

ROOT = Path(__file__).resolve().parent.parent
CARGO = ROOT / "Cargo.toml"
NODE = ROOT / "bindings-node" / "package.json"
PLATFORMS = sorted((ROOT / "bindings-node" / "npm").glob("*/package.json"))
LOCK = ROOT / "package-lock.json"
CHANGELOG = ROOT / "CHANGELOG.md"
SEMVER = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?")
# A changelog section heading: `## 0.1.0 — 2026-12-01` (or `## [0.1.0]`).
SECTION = re.compile(r"^## \[?(" + SEMVER.pattern + r")\]?", re.M)


def version() -> str:
    return tomllib.loads(CARGO.read_text(encoding="utf-8"))["workspace"]["package"]["version"]


def places() -> dict[str, str | None]:
    """Every other place that states the version, and what it says."""
    cargo = tomllib.loads(CARGO.read_text(encoding="utf-8"))
    found: dict[str, str | None] = {}
    for name in ("mcplens", "mcplens-cli"):
        found[f"Cargo.toml [workspace.dependencies] {name}"] = cargo["workspace"]["dependencies"][name].get("version")
    for path in [NODE, *PLATFORMS]:
        found[str(path.relative_to(ROOT))] = json.loads(path.read_text(encoding="utf-8")).get("version")
    lock = json.loads(LOCK.read_text(encoding="utf-8"))
    found["package-lock.json bindings-node"] = lock["packages"].get("bindings-node", {}).get("version")
    section = SECTION.search(CHANGELOG.read_text(encoding="utf-8")) if CHANGELOG.exists() else None
    found["CHANGELOG.md (newest section)"] = section.group(1) if section else None
    return found


def check() -> int:
    want = version()
    wrong = {place: said for place, said in places().items() if said != want}
    for place, said in wrong.items():
        print(f"version: {place} says {said!r}, Cargo.toml [workspace.package] says {want!r}", file=sys.stderr)
    if wrong:
        print("run `python3 packaging/version.py set VERSION` (and give CHANGELOG.md its section)", file=sys.stderr)
        return 1
    print(f"version {want}: the same in {len(places()) + 1} places")
    return 0


def set_version(new: str) -> int:
    if not SEMVER.fullmatch(new):
        print(f"version: {new!r} is not MAJOR.MINOR.PATCH[-PRE]", file=sys.stderr)
        return 2
    old = version()
    text = CARGO.read_text(encoding="utf-8")
    text = re.sub(r'(\[workspace\.package\]\nversion = ")[^"]*(")', rf"\g<1>{new}\g<2>", text)
    text = re.sub(
        r'^(mcplens(?:-cli)? = \{ path = "[^"]+", version = ")[^"]*(")', rf"\g<1>{new}\g<2>", text, flags=re.M
    )
    CARGO.write_text(text, encoding="utf-8")
    for path in [NODE, *PLATFORMS]:
        text = path.read_text(encoding="utf-8")
        path.write_text(re.sub(r'^(  "version": ")[^"]*(")', rf"\g<1>{new}\g<2>", text, count=1, flags=re.M))
    lock = LOCK.read_text(encoding="utf-8")
    lock = re.sub(r'("bindings-node": \{\n\s+"name": "mcplens",\n\s+"version": ")[^"]*(")', rf"\g<1>{new}\g<2>", lock)
    LOCK.write_text(lock, encoding="utf-8")
    print(f"version {old} -> {new}; add a `## {new}` section to CHANGELOG.md, then run `cargo update -w`")
    return 0


if __name__ == "__main__":
    match sys.argv[1:]:
        case []:
            print(version())
        case ["check"]:
            sys.exit(check())
        case ["set", new]:
            sys.exit(set_version(new))
        case _:
            sys.exit(__doc__)
