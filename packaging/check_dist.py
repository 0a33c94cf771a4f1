"""The last step of `make dist`: what dist/ holds is what it should, then the sizes.

    python packaging/check_dist.py DIST SDIST_WHEEL_DIR      (the Python of .build/venv-build)

- the wheel: `cp310-abi3`, and exactly the manylinux tag auditwheel says the glibc symbols of its
  native module need (no guess; one of a compressed tag set); the native module, the typed
  package, the `mcplens` command;
- the sdist: the workspace sources it builds from, and the wheel built from it (by `make dist`)
  holding the same files as the wheel;
- the npm packages: the main one carries no addon and depends (optionally) on each platform one in
  DIST at the same version; the host's carries the addon for linux/x64/glibc;
- the crates: `mcplens` and `mcplens-cli` at the version.
"""

from __future__ import annotations

import configparser
import json
import re
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "packaging"))
from version import version  # noqa: E402

problems: list[str] = []


def expect(ok: bool, what: str) -> None:
    if not ok:
        problems.append(what)


def one(dist: Path, pattern: str) -> Path:
    found = sorted(dist.glob(pattern))
    if len(found) != 1:
        sys.exit(f"check_dist: expected one {pattern} in {dist}, found {[p.name for p in found]}")
    return found[0]


def wheel_files(path: Path) -> set[str]:
    with zipfile.ZipFile(path) as z:
        return {n for n in z.namelist() if ".dist-info/" not in n}


def check_wheel(dist: Path, v: str) -> Path:
    # The host's wheel (x86_64 glibc: built here, or the glibc 2.17 one of `make dist-all`, under a
    # compressed tag set); `make dist-all` adds the other platforms' (check_dist_all.py).
    wheel = one(dist, "mcplens-*-manylinux*_x86_64.whl")
    match = re.fullmatch(rf"mcplens-{re.escape(v)}-cp310-abi3-(\S+)\.whl", wheel.name)
    expect(match is not None, f"{wheel.name}: not mcplens-{v}-cp310-abi3-PLATFORM.whl")
    platform = match.group(1) if match else ""
    shown = subprocess.run(
        [str(Path(sys.executable).parent / "auditwheel"), "show", str(wheel)], capture_output=True, text=True
    )
    text = " ".join(shown.stdout.split())
    needed = re.search(r'constrains the platform tag to "([^"]+)"', text)
    expect(shown.returncode == 0 and needed is not None, f"auditwheel show {wheel.name} failed: {shown.stderr}")
    if needed:
        expect(
            needed.group(1) in platform.split("."),
            f"{wheel.name} is tagged {platform}; auditwheel: needs {needed.group(1)}",
        )
        print(f"check_dist: {wheel.name}: auditwheel says its glibc symbols need {needed.group(1)}")
    names = wheel_files(wheel)
    for required in ["mcplens/_core.abi3.so", "mcplens/__init__.py", "mcplens/__main__.py", "mcplens/py.typed"]:
        expect(required in names, f"{wheel.name} lacks {required}")
    with zipfile.ZipFile(wheel) as z:
        entry = z.read(f"mcplens-{v}.dist-info/entry_points.txt").decode()
        metadata = z.read(f"mcplens-{v}.dist-info/METADATA").decode()
    scripts = configparser.ConfigParser()
    scripts.read_string(entry)
    expect(
        scripts.get("console_scripts", "mcplens", fallback=None) == "mcplens.__main__:main",
        f"{wheel.name}: no `mcplens` console script",
    )
    expect(f"Version: {v}\n" in metadata, f"{wheel.name}: METADATA is not version {v}")
    return wheel


def check_sdist(dist: Path, v: str, built: Path, wheel: Path) -> None:
    sdist = one(dist, f"mcplens-{v}.tar.gz")
    with tarfile.open(sdist) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    for required in ["pyproject.toml", "Cargo.toml", "Cargo.lock", "core/src/lib.rs", "cli/src/lib.rs"]:
        expect(any(n == required or n.endswith("/" + required) for n in names), f"{sdist.name} lacks {required}")
    from_source = one(built, f"mcplens-{v}-*.whl")
    expect(
        wheel_files(from_source) == wheel_files(wheel),
        f"the wheel built from {sdist.name} holds other files than {wheel.name}",
    )
    print(f"check_dist: {sdist.name} builds from source ({from_source.name})")


def package_json(tgz: Path) -> dict:
    with tarfile.open(tgz) as t:
        member = t.extractfile("package/package.json")
        assert member is not None
        return json.load(member)


def export_targets(entry: object) -> list[str]:
    """Every file a package.json `exports` entry points at."""
    if isinstance(entry, str):
        return [entry]
    if isinstance(entry, dict):
        return [t for value in entry.values() for t in export_targets(value)]
    return []


def check_npm(dist: Path, v: str) -> None:
    main = one(dist, f"mcplens-{v}.tgz")
    host = one(dist, f"mcplens-linux-x64-gnu-{v}.tgz")
    # With `make dist-all`'s too: the main package lists each.
    platforms = sorted(dist.glob(f"mcplens-*-{v}.tgz"))
    manifest = package_json(main)
    with tarfile.open(main) as t:
        names = set(t.getnames())
    for required in ["native.js", "native.d.ts", "dist/index.js", "dist/index.mjs", "bin/mcplens.cjs", "README.md"]:
        expect(f"package/{required}" in names, f"{main.name} lacks {required}")
    for target in export_targets(manifest.get("exports", {})):  # the root and every subpath (mcplens/ai, …)
        expect(f"package/{target.removeprefix('./')}" in names, f"{main.name} lacks {target}, which `exports` names")
    expect(not any(n.endswith(".node") for n in names), f"{main.name} carries an addon")
    expect(manifest["version"] == v, f"{main.name}: version {manifest['version']}")
    expect(manifest.get("bin", {}).get("mcplens") == "bin/mcplens.cjs", f"{main.name}: no `mcplens` bin")
    expect(not manifest.get("scripts"), f"{main.name}: carries the repository's scripts {manifest.get('scripts')}")
    for platform in platforms:
        p = package_json(platform)
        expect(
            manifest.get("optionalDependencies", {}).get(p["name"]) == v,
            f"{main.name} does not depend on {p['name']}@{v}",
        )
        expect(p["version"] == v, f"{platform.name}: version {p['version']}")
        if platform == host:
            expect(
                (p["os"], p["cpu"], p.get("libc")) == (["linux"], ["x64"], ["glibc"]), f"{platform.name}: os/cpu/libc"
            )
        with tarfile.open(platform) as t:
            expect(f"package/{p['main']}" in t.getnames(), f"{platform.name} lacks {p['main']}")


def check_crates(dist: Path, v: str) -> None:
    for name in ["mcplens", "mcplens-cli"]:
        one(dist, f"{name}-{v}.crate")


def main() -> None:
    dist, built = Path(sys.argv[1]), Path(sys.argv[2])
    v = version()
    wheel = check_wheel(dist, v)
    check_sdist(dist, v, built, wheel)
    check_npm(dist, v)
    check_crates(dist, v)
    if problems:
        sys.exit("check_dist:\n  " + "\n  ".join(problems))
    print(f"check_dist: dist/ holds mcplens {v} for every front door")
    for path in sorted(p for p in dist.iterdir() if not p.name.startswith(".")):
        print(f"  {path.stat().st_size / 1e6:7.2f} MB  {path.name}")


if __name__ == "__main__":
    main()
