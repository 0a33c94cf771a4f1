"""`make dist-all`, one target: the abi3 wheel and the npm platform package, cross-built with zig.

    python packaging/dist_target.py TARGET DIST      (the Python of .build/venv-cross: zig, maturin)

Both come from one cargo target directory and one set of flags, so the wheel's cargo run reuses the
release build of every dependency the addon's made (`packaging/features.py`: the same features):

- the addon: `cargo zigbuild --release -p mcplens-node` (what `napi build -x` runs; the loader and
  types napi generates do not depend on the target, so `bindings-node/native.js` is left as napi
  wrote it), copied into `bindings-node/npm/PLATFORM/` as napi's `artifacts` step names it, then
  packed with `npm pack`;
- the wheel: `maturin build --release`, its cargo being cargo-zigbuild (packaging/zig_cargo.py, not
  `maturin --zig`: that links through wrappers of its own, and cargo, which hashes the linker into
  every unit's fingerprint, then compiled the whole tree twice), with the glibc floor of the
  manylinux tag asked of zig (`T.2.17`; auditwheel checks the result in `make check-dist-all`).

Before copying, it removes from DIST only this platform's wheel and platform package (`make dist`
and the other targets keep theirs). Timings of each step are printed.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "packaging"))
from version import version  # noqa: E402

# macOS minimum versions: rustc's own floor for each target (x86_64: 10.12, arm64: 11.0).
MACOS_MIN = {"x86_64-apple-darwin": "10.12", "aarch64-apple-darwin": "11.0"}


@dataclass(frozen=True)
class Target:
    triple: str
    npm: str  # napi's platform name: the package mcplens-<npm>, the addon mcplens.<npm>.node
    wheel_platform: str  # glob of the wheel's platform tag (what this target owns in DIST)
    compatibility: str | None = None  # maturin --compatibility (the tag zig is asked to meet)
    zig_suffix: str = ""  # cargo-zigbuild's glibc version suffix (the same floor as the wheel's)

    @property
    def musl(self) -> bool:
        return self.triple.endswith("-musl")

    @property
    def macos(self) -> bool:
        return self.triple.endswith("-apple-darwin")

    @property
    def windows(self) -> bool:
        return self.triple.endswith("-windows-gnu")

    @property
    def library(self) -> str:
        if self.windows:
            return "mcplens_node.dll"
        return "libmcplens_node.dylib" if self.macos else "libmcplens_node.so"


# The glibc floor: 2.17 (manylinux2014), what Rust's std itself needs on Linux.
TARGETS = {
    t.triple: t
    for t in [
        Target("x86_64-unknown-linux-gnu", "linux-x64-gnu", "manylinux_*_x86_64", "manylinux_2_17", ".2.17"),
        Target("aarch64-unknown-linux-gnu", "linux-arm64-gnu", "manylinux_*_aarch64", "manylinux_2_17", ".2.17"),
        Target("x86_64-unknown-linux-musl", "linux-x64-musl", "musllinux_*_x86_64", "musllinux_1_2"),
        Target("aarch64-unknown-linux-musl", "linux-arm64-musl", "musllinux_*_aarch64", "musllinux_1_2"),
        Target("x86_64-apple-darwin", "darwin-x64", "macosx_*_x86_64"),
        Target("aarch64-apple-darwin", "darwin-arm64", "macosx_*_arm64"),
        # Built with mingw's ABI (zig; MSVC's CRT and SDK are not reachable here), shipped under the
        # name official Windows Node's loader looks for (win32-x64-msvc): an addon only talks to
        # Node through N-API, whose symbols napi-sys resolves from node.exe at load time.
        Target("x86_64-pc-windows-gnu", "win32-x64-msvc", "win_amd64"),
    ]
}


def run(cmd: list[str], env: dict[str, str], what: str) -> None:
    started = time.monotonic()
    print(f"dist_target: {' '.join(cmd)}", flush=True)
    subprocess.run(cmd, cwd=ROOT, env=env, check=True)
    print(f"dist_target: {what}: {time.monotonic() - started:.0f} s", flush=True)


def environment(t: Target) -> dict[str, str]:
    env = dict(os.environ)
    # zig and cargo-zigbuild come from the venv this script runs in.
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    if t.musl:
        # musl targets link the C runtime statically and refuse cdylibs unless told not to. Set for
        # both builds (maturin would add it on its own): the same flags, one dependency build.
        env["RUSTFLAGS"] = (env.get("RUSTFLAGS", "") + " -C target-feature=-crt-static").strip()
    if t.macos:
        env["MACOSX_DEPLOYMENT_TARGET"] = MACOS_MIN[t.triple]
    return env


def libnode(out: Path) -> Path:
    """napi-build's windows-gnu path insists on a `libnode.dll` in LIBNODE_PATH and links `-lnode`.
    napi-sys (feature dyn-symbols, its default) looks every N-API function up in node.exe at load
    time, so the addon references none: an import library of node.exe naming none of them
    satisfies both (libnode.a, which the linker finds first; libnode.dll the same file, for the
    existence check). check_dist_all.py checks the DLL imports no node.exe."""
    folder = out / "libnode"
    folder.mkdir()
    (folder / "node.def").write_text("LIBRARY node.exe\nEXPORTS\n")
    dlltool = shutil.which("x86_64-w64-mingw32-dlltool") or sys.exit(
        "dist_target: x86_64-w64-mingw32-dlltool is missing (make platform-debs: binutils-mingw-w64-x86-64)"
    )
    subprocess.run([dlltool, "-d", "node.def", "-l", "libnode.a", "-m", "i386:x86-64"], cwd=folder, check=True)
    shutil.copyfile(folder / "libnode.a", folder / "libnode.dll")
    return folder


def main() -> None:
    triple, dist = sys.argv[1], (ROOT / sys.argv[2]).resolve()
    t = TARGETS.get(triple) or sys.exit(f"dist_target: no target {triple}; known: {', '.join(TARGETS)}")
    v = version()
    env = environment(t)
    cargo_target = Path(env.get("CARGO_TARGET_DIR", ROOT / "target"))
    out = ROOT / ".build" / "dist-all" / triple
    shutil.rmtree(out, ignore_errors=True)
    out.mkdir(parents=True)
    if t.windows:
        # The wheel's python3.dll is linked by raw-dylib: rustc runs mingw's dlltool for it.
        env["LIBNODE_PATH"] = str(libnode(out))

    # One cargo-zigbuild for both (the wheel's through packaging/zig_cargo.py): the same linker
    # wrappers, so the second cargo run reuses every dependency the first one compiled.
    zigbuild = str(Path(sys.executable).parent / "cargo-zigbuild")
    zig_target = triple + t.zig_suffix
    run([zigbuild, "zigbuild", "--release", "--target", zig_target, "-p", "mcplens-node"], env, "addon")

    wheel = [sys.executable, "-m", "maturin", "build", "--release", "--target", triple]
    if t.compatibility:
        wheel += ["--compatibility", t.compatibility]
    shim = {"CARGO": str(ROOT / "packaging" / "zig_cargo.py"), "DIST_TARGET": triple, "DIST_ZIG_TARGET": zig_target}
    run(
        [*wheel, "--quiet", "--manifest-path", "bindings-python/Cargo.toml", "--out", str(out)],
        {**env, **shim, "DIST_CARGO_ZIGBUILD": zigbuild},
        "wheel",
    )
    built = list(out.glob(f"mcplens-{v}-cp310-abi3-*.whl"))
    if len(built) != 1:
        sys.exit(f"dist_target: maturin wrote {[p.name for p in out.iterdir()]}")

    package = ROOT / "bindings-node" / "npm" / t.npm
    shutil.copyfile(cargo_target / triple / "release" / t.library, package / f"mcplens.{t.npm}.node")

    dist.mkdir(parents=True, exist_ok=True)
    for old in [*dist.glob(f"mcplens-*-{t.wheel_platform}.whl"), *dist.glob(f"mcplens-{t.npm}-*.tgz")]:
        old.unlink()
    shutil.copy(built[0], dist)
    subprocess.run(
        ["npm", "pack", "--ignore-scripts", "--silent", "--pack-destination", str(dist)], cwd=package, check=True
    )
    print(f"dist_target: {triple}: {built[0].name}, mcplens-{t.npm}-{v}.tgz")


if __name__ == "__main__":
    main()
