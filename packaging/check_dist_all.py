"""`make check-dist-all`: every wheel and npm platform package in dist/, whatever built it.

    python packaging/check_dist_all.py DIST      (the Python of .build/venv-cross: auditwheel, pyelftools)

For each platform (from the wheel's platform tag and the npm package's name), the native module in
the artifact is read, not trusted from its name:

- format and architecture: ELF64 x86_64/aarch64, Mach-O x86_64/arm64 (llvm-objdump), or PE32+
  x86-64 (mingw's objdump);
- the entry symbol it exports: `PyInit__core` (the wheel), `napi_register_module_v1` (the addon);
- the libraries it links (besides its own install name): on Linux, only what the
  manylinux/musllinux policy allows — for glibc wheels `auditwheel show` must name exactly the
  wheel's own tag (musl: see check_wheel); for the addons (no auditwheel for them) the NEEDED
  entries are the C runtime's and, on glibc, no versioned symbol is newer than the floor the
  wheel of the same target has; on macOS
  only what /usr/lib of every macOS has (libSystem, and the libiconv Rust's `libc` crate links),
  and the minimum macOS version in `LC_BUILD_VERSION`/`LC_VERSION_MIN_MACOSX` is the one stated in
  packaging/dist_target.py; on Windows only DLLs every Windows 10 has (the UCRT's api-sets
  included; none of mingw's runtime DLLs, and no node.exe: napi-sys looks N-API up at load time),
  and `python3.dll` for the wheel (PyO3's raw-dylib link);
- the wheel's tags (`cp310-abi3-PLATFORM`, and its WHEEL file says the same) and that each
  carries the `mcplens` command; the npm package's `os`/`cpu`/`libc`, and the main npm package
  lists it in `optionalDependencies`.
Prints a row per artifact with its size.
"""

from __future__ import annotations

import configparser
import json
import re
import subprocess
import sys
import tarfile
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from elftools.elf.elffile import ELFFile
from elftools.elf.gnuversions import GNUVerNeedSection

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "packaging"))
from dist_target import MACOS_MIN  # noqa: E402
from version import version  # noqa: E402

problems: list[str] = []


def expect(ok: bool, what: str) -> None:
    if not ok:
        problems.append(what)


@dataclass(frozen=True)
class Platform:
    os: str  # linux | darwin | win32
    arch: str  # x86_64 | aarch64
    libc: str | None  # glibc | musl | None

    @property
    def npm_cpu(self) -> str:
        return {"x86_64": "x64", "aarch64": "arm64"}[self.arch]

    @property
    def npm(self) -> str:
        if self.os == "win32":  # the name official Node's loader looks for (packaging/dist_target.py)
            return f"win32-{self.npm_cpu}-msvc"
        return f"{self.os}-{self.npm_cpu}" + ({"glibc": "-gnu", "musl": "-musl"}.get(self.libc or "", ""))

    @property
    def triple(self) -> str:
        if self.os == "darwin":
            return f"{self.arch}-apple-darwin"
        if self.os == "win32":
            return f"{self.arch}-pc-windows-gnu"
        return f"{self.arch}-unknown-linux-{'gnu' if self.libc == 'glibc' else 'musl'}"


def from_one_tag(tag: str) -> Platform | None:
    if m := re.fullmatch(r"manylinux(?:_\d+_\d+|2014)_(x86_64|aarch64)", tag):
        return Platform("linux", m.group(1), "glibc")
    if m := re.fullmatch(r"musllinux_\d+_\d+_(x86_64|aarch64)", tag):
        return Platform("linux", m.group(1), "musl")
    if m := re.fullmatch(r"macosx_\d+_\d+_(x86_64|arm64)", tag):
        return Platform("darwin", "aarch64" if m.group(1) == "arm64" else "x86_64", None)
    if tag == "win_amd64":
        return Platform("win32", "x86_64", None)
    return None


def from_wheel_tag(tag: str) -> Platform | None:
    """The platform of a (compressed: `manylinux2014_x.manylinux_2_17_x`) platform tag."""
    found = {from_one_tag(t) for t in tag.split(".")}
    return found.pop() if len(found) == 1 else None


NPM_PLATFORMS = {
    p.npm: p
    for p in [Platform("linux", a, c) for a in ("x86_64", "aarch64") for c in ("glibc", "musl")]
    + [Platform("darwin", a, None) for a in ("x86_64", "aarch64")]
    + [Platform("win32", "x86_64", None)]
}

# What a Linux module may link: the C runtime (and, on glibc, the libraries manylinux guarantees).
GLIBC_LIBS = {
    "libc.so.6",
    "libm.so.6",
    "libpthread.so.0",
    "libdl.so.2",
    "librt.so.1",
    "libutil.so.1",
    "libgcc_s.so.1",
    "ld-linux-x86-64.so.2",
    "ld-linux-aarch64.so.1",
}
MUSL_LIBS = {
    "libc.so",
    "libc.musl-x86_64.so.1",
    "libc.musl-aarch64.so.1",
    "ld-musl-x86_64.so.1",
    "ld-musl-aarch64.so.1",
}
# libSystem, and the libiconv that the `libc` crate links on Apple targets (`link(name = "iconv")`
# in libc 0.2.191, a dependency of tokio and others; libcharset comes with it): all three are in
# /usr/lib of every macOS.
MACOS_LIBS = {"/usr/lib/libSystem.B.dylib", "/usr/lib/libiconv.2.dylib", "/usr/lib/libcharset.1.dylib"}
# DLLs of every Windows 10 (System32), compared without case: what Rust's std, ring, tokio/mio,
# the TLS verifier (crypt32) and the UCRT (api-ms-win-crt-*, by prefix) import. Not mingw's runtime
# (libgcc_s_seh-1.dll, libwinpthread-1.dll, libstdc++-6.dll), not node.exe.
WINDOWS_LIBS = {
    "advapi32.dll",
    "bcrypt.dll",
    "bcryptprimitives.dll",
    "crypt32.dll",
    "kernel32.dll",
    "ncrypt.dll",
    "ntdll.dll",
    "ole32.dll",
    "oleaut32.dll",
    "secur32.dll",
    "shell32.dll",
    "user32.dll",
    "userenv.dll",
    "ws2_32.dll",
}
WINDOWS_API_SETS = ("api-ms-win-crt-", "api-ms-win-core-")


def glibc_floor(tag: str) -> tuple[int, int]:
    m = re.search(r"(?:^|\.)manylinux_(\d+)_(\d+)_\w+", tag)
    assert m, tag
    return int(m.group(1)), int(m.group(2))


def check_elf(path: Path, what: str, p: Platform, entry: str, floor: tuple[int, int] | None) -> str:
    with path.open("rb") as f:
        elf = ELFFile(f)
        machine = {"x86_64": "EM_X86_64", "aarch64": "EM_AARCH64"}[p.arch]
        expect(
            elf.elfclass == 64 and elf["e_machine"] == machine and elf["e_type"] == "ET_DYN",
            f"{what}: ELF{elf.elfclass} {elf['e_machine']} {elf['e_type']}, not a 64-bit {machine} shared object",
        )
        dynamic = elf.get_section_by_name(".dynamic")
        needed = {t.needed for t in dynamic.iter_tags() if t.entry.d_tag == "DT_NEEDED"} if dynamic else set()
        allowed = GLIBC_LIBS if p.libc == "glibc" else MUSL_LIBS
        expect(needed <= allowed, f"{what}: links {sorted(needed - allowed)} (not in the {p.libc} policy)")
        if p.libc == "musl":
            expect(not any(n in GLIBC_LIBS for n in needed), f"{what}: links glibc {sorted(needed)}")
        symbols = elf.get_section_by_name(".dynsym")
        exported = {s.name for s in symbols.iter_symbols() if s["st_shndx"] != "SHN_UNDEF"} if symbols else set()
        expect(entry in exported, f"{what}: does not export {entry}")
        newest = (0, 0)
        for section in elf.iter_sections():
            if isinstance(section, GNUVerNeedSection):
                for _, auxes in section.iter_versions():
                    for aux in auxes:
                        if m := re.fullmatch(r"GLIBC_(\d+)\.(\d+)(?:\.\d+)?", aux.name):
                            newest = max(newest, (int(m.group(1)), int(m.group(2))))
        if p.libc == "glibc" and floor is not None:
            expect(newest <= floor, f"{what}: needs GLIBC_{newest[0]}.{newest[1]}, newer than {floor[0]}.{floor[1]}")
        if p.libc == "musl":
            expect(newest == (0, 0), f"{what}: has glibc symbol versions (GLIBC_{newest[0]}.{newest[1]})")
    glibc = f", newest GLIBC_{newest[0]}.{newest[1]}" if newest != (0, 0) else ""
    return f"ELF {p.arch}, links {' '.join(sorted(needed))}{glibc}"


def objdump(*args: str) -> str:
    return subprocess.run(["llvm-objdump", "--macho", *args], capture_output=True, text=True, check=True).stdout


def check_macho(path: Path, what: str, p: Platform, entry: str) -> str:
    headers = objdump("--private-header", "--private-headers", str(path))
    # mach header: magic cputype cpusubtype caps filetype ...
    m = re.search(r"^\s*MH_MAGIC_64\s+(\S+)\s+\S+\s+\S+\s+(\S+)", headers, re.MULTILINE)
    cpu = {"x86_64": "X86_64", "aarch64": "ARM64"}[p.arch]
    expect(
        m is not None and m.group(1) == cpu and m.group(2) == "DYLIB",
        f"{what}: Mach-O header {m.groups() if m else headers[:200]!r}, not a 64-bit {cpu} dylib",
    )
    minimum = None
    # Each load command's block: `cmd LC_…` and its fields up to the next `Load command N`.
    for block in re.split(r"^Load command \d+$", headers, flags=re.MULTILINE):
        fields = dict(line.split(None, 1) for line in block.strip().splitlines() if len(line.split(None, 1)) == 2)
        if fields.get("cmd") == "LC_BUILD_VERSION":
            expect(fields.get("platform", "").upper() == "MACOS", f"{what}: LC_BUILD_VERSION platform {fields}")
            minimum = fields.get("minos")
        elif fields.get("cmd") == "LC_VERSION_MIN_MACOSX":
            minimum = fields.get("version")
    stated = MACOS_MIN[p.triple]
    expect(minimum == stated, f"{what}: minimum macOS {minimum}, not {stated} (MACOSX_DEPLOYMENT_TARGET)")
    # --dylibs-used lists the module's own install name (LC_ID_DYLIB) first, then what it loads.
    own = {line.strip() for line in objdump("--dylib-id", str(path)).splitlines()[1:]}
    used = objdump("--dylibs-used", str(path)).splitlines()[1:]
    dylibs = {line.split(" (")[0].strip() for line in used if line.strip()} - own
    expect(dylibs <= MACOS_LIBS, f"{what}: links {sorted(dylibs - MACOS_LIBS)} (not in /usr/lib of every macOS)")
    exports = objdump("--exports-trie", str(path))
    expect(re.search(rf"\b_{entry}\b", exports) is not None, f"{what}: does not export {entry}")
    names = " ".join(sorted(d.rsplit("/", 1)[-1] for d in dylibs))
    return f"Mach-O {p.arch}, macOS >= {minimum}, links {names}"


def check_pe(path: Path, what: str, entry: str, python: bool) -> str:
    dump = subprocess.run(["x86_64-w64-mingw32-objdump", "-p", str(path)], capture_output=True, text=True, check=True)
    text = dump.stdout
    expect("file format pei-x86-64" in text, f"{what}: not PE32+ x86-64 ({text[:120]!r})")
    expect(re.search(r"^Characteristics .*\n(?:\t.*\n)*?\tDLL", text, re.MULTILINE) is not None, f"{what}: not a DLL")
    dlls = {m.group(1) for m in re.finditer(r"^\s*DLL Name: (\S+)", text, re.MULTILINE)}
    allowed = WINDOWS_LIBS | ({"python3.dll"} if python else set())
    foreign = {d for d in dlls if d.lower() not in allowed and not d.lower().startswith(WINDOWS_API_SETS)}
    expect(not foreign, f"{what}: imports {sorted(foreign)} (not a DLL of every Windows 10)")
    if python:
        expect("python3.dll" in {d.lower() for d in dlls}, f"{what}: does not import python3.dll (abi3)")
    # The export table: `[ordinal] name` rows after "[Ordinal/Name Pointer] Table".
    table = text.split("[Ordinal/Name Pointer] Table", 1)[-1]
    exported = set(re.findall(r"^\s*\[\s*\d+\]\s+(\S+)", table, re.MULTILINE))
    expect(entry in exported, f"{what}: does not export {entry}")
    crt = {d.lower() for d in dlls if d.lower().startswith(WINDOWS_API_SETS)}
    names = " ".join(sorted({d.lower() for d in dlls} - crt))
    return f"PE32+ x86-64 DLL, imports {names} and {len(crt)} UCRT/core api-sets"


def check_native(path: Path, what: str, p: Platform, entry: str, floor: tuple[int, int] | None) -> str:
    magic = path.read_bytes()[:4]
    if p.os == "win32":
        expect(magic[:2] == b"MZ", f"{what}: not a PE file ({magic!r})")
        return check_pe(path, what, entry, entry == "PyInit__core") if magic[:2] == b"MZ" else ""
    if p.os == "linux":
        expect(magic == b"\x7fELF", f"{what}: not ELF ({magic!r})")
        return check_elf(path, what, p, entry, floor) if magic == b"\x7fELF" else ""
    expect(magic == b"\xcf\xfa\xed\xfe", f"{what}: not a 64-bit Mach-O ({magic!r})")
    return check_macho(path, what, p, entry) if magic == b"\xcf\xfa\xed\xfe" else ""


def auditwheel(wheel: Path, tag: str) -> None:
    shown = subprocess.run(
        [str(Path(sys.executable).parent / "auditwheel"), "show", str(wheel)], capture_output=True, text=True
    )
    text = " ".join(shown.stdout.split())
    # auditwheel names the tag the symbols constrain it to (glibc), or the one it is consistent with.
    said = re.search(r'constrains the platform tag to "([^"]+)"', text) or re.search(
        r'consistent with the following platform tag: "([^"]+)"', text
    )
    expect(shown.returncode == 0 and said is not None, f"auditwheel show {wheel.name}: {shown.stdout}{shown.stderr}")
    if said:
        expect(said.group(1) in tag.split("."), f"{wheel.name} is tagged {tag}; auditwheel says {said.group(1)}")


def check_wheel(wheel: Path, v: str, tmp: Path) -> tuple[Platform | None, str, tuple[int, int] | None]:
    m = re.fullmatch(rf"mcplens-{re.escape(v)}-cp310-abi3-(\S+)\.whl", wheel.name)
    expect(m is not None, f"{wheel.name}: not mcplens-{v}-cp310-abi3-PLATFORM.whl")
    tag = m.group(1) if m else ""
    p = from_wheel_tag(tag)
    expect(p is not None, f"{wheel.name}: unknown platform tag {tag}")
    if p is None:
        return None, "", None
    native = "mcplens/_core.pyd" if p.os == "win32" else "mcplens/_core.abi3.so"
    with zipfile.ZipFile(wheel) as z:
        names = set(z.namelist())
        for required in [native, "mcplens/__init__.py", "mcplens/__main__.py", "mcplens/py.typed"]:
            expect(required in names, f"{wheel.name} lacks {required}")
        wheel_meta = z.read(f"mcplens-{v}.dist-info/WHEEL").decode()
        tags = {line.split(": ", 1)[1].strip() for line in wheel_meta.splitlines() if line.startswith("Tag: ")}
        expect(tags == {f"cp310-abi3-{t}" for t in tag.split(".")}, f"{wheel.name}: WHEEL says {sorted(tags)}")
        scripts = configparser.ConfigParser()
        scripts.read_string(z.read(f"mcplens-{v}.dist-info/entry_points.txt").decode())
        expect(
            scripts.get("console_scripts", "mcplens", fallback=None) == "mcplens.__main__:main",
            f"{wheel.name}: no `mcplens` console script",
        )
        module = tmp / f"{p.triple}-{native.rsplit('/', 1)[-1]}"
        module.write_bytes(z.read(native) if native in names else b"")
    floor = glibc_floor(tag) if p.libc == "glibc" else None
    # auditwheel on this glibc machine cannot read a musl wheel: it resolves `libc.so` to the host's
    # linker script and fails ("Magic number does not match"); with no ldpaths it calls libc.so
    # unresolved. Its musllinux_1_2 policy allows libc.so (and libz.so.1); check_elf holds a musl
    # module to MUSL_LIBS and no glibc symbol version instead.
    if p.libc == "glibc":
        auditwheel(wheel, tag)
    return p, check_native(module, wheel.name, p, "PyInit__core", floor), floor


def package_json(tgz: Path) -> dict:
    with tarfile.open(tgz) as t:
        member = t.extractfile("package/package.json")
        assert member is not None
        return json.load(member)


def check_npm(tgz: Path, p: Platform, v: str, tmp: Path, floor: tuple[int, int] | None) -> str:
    manifest = package_json(tgz)
    expect(
        manifest["name"] == f"mcplens-{p.npm}" and manifest["version"] == v,
        f"{tgz.name}: {manifest['name']}@{manifest['version']}",
    )
    libc = {"glibc": ["glibc"], "musl": ["musl"]}.get(p.libc or "")  # None: not a Linux package
    expect(
        (manifest.get("os"), manifest.get("cpu"), manifest.get("libc")) == ([p.os], [p.npm_cpu], libc),
        f"{tgz.name}: os/cpu/libc {manifest.get('os')} {manifest.get('cpu')} {manifest.get('libc')}",
    )
    addon = f"mcplens.{p.npm}.node"
    expect(manifest.get("main") == addon, f"{tgz.name}: main {manifest.get('main')}, not {addon}")
    with tarfile.open(tgz) as t:
        member = t.extractfile(f"package/{addon}") if f"package/{addon}" in t.getnames() else None
        expect(member is not None, f"{tgz.name} lacks {addon}")
        path = tmp / addon
        path.write_bytes(member.read() if member else b"")
    return check_native(path, tgz.name, p, "napi_register_module_v1", floor)


def main() -> None:
    dist = Path(sys.argv[1])
    v = version()
    main_tgz = dist / f"mcplens-{v}.tgz"
    optional = package_json(main_tgz).get("optionalDependencies", {}) if main_tgz.exists() else {}
    expect(main_tgz.exists(), f"{main_tgz} is missing (make dist)")
    rows: list[tuple[str, str]] = []
    wheels: dict[str, tuple[int, int] | None] = {}
    with tempfile.TemporaryDirectory() as tmpdir:
        tmp = Path(tmpdir)
        for wheel in sorted(dist.glob("mcplens-*.whl")):
            p, summary, floor = check_wheel(wheel, v, tmp)
            if p:
                expect(p.npm not in wheels, f"two wheels for {p.npm} in {dist}")
                wheels[p.npm] = floor
                rows.append((wheel.name, summary))
        packages = sorted(t for t in dist.glob(f"mcplens-*-{v}.tgz"))
        for tgz in packages:
            npm = tgz.name.removeprefix("mcplens-").removesuffix(f"-{v}.tgz")
            p = NPM_PLATFORMS.get(npm)
            expect(p is not None, f"{tgz.name}: unknown platform {npm}")
            if p is None:
                continue
            expect(optional.get(f"mcplens-{npm}") == v, f"{main_tgz.name} does not list mcplens-{npm}@{v}")
            expect(npm in wheels, f"{tgz.name}: no wheel for the same platform in {dist}")
            rows.append((tgz.name, check_npm(tgz, p, v, tmp, wheels.get(npm))))
        listed = set(optional) - {
            f"mcplens-{t.name.removeprefix('mcplens-').removesuffix(f'-{v}.tgz')}" for t in packages
        }
        expect(not listed, f"{main_tgz.name} lists {sorted(listed)}, not in {dist}")
    for name, summary in rows:
        print(f"  {(dist / name).stat().st_size / 1e6:6.2f} MB  {name}: {summary}")
    if problems:
        sys.exit("check_dist_all:\n  " + "\n  ".join(problems))
    print(
        f"check_dist_all: {len(wheels)} wheels and {len(rows) - len(wheels)} npm platform packages of mcplens {v} pass"
    )


if __name__ == "__main__":
    main()
