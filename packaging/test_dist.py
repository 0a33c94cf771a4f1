"""`make test-dist`: the artifacts of dist/ installed as a user installs them, with no Rust toolchain.

    python3 packaging/test_dist.py          (after `make dist`: it installs from dist/)

In a temporary folder, with a PATH that holds python3, node and npm only (no cargo, rustc, rustup;
no CARGO_* or RUSTUP_* variables), it runs the README's install block (`<!-- test-dist -->`), which
puts the wheel into a fresh venv and the two npm tarballs into a fresh folder. Then, against real
servers (the Python `mcp` 2.3 SDK from the pinned requirements, @modelcontextprotocol/server-everything
from the repository's node_modules):

- each README quickstart and template example, Python and Node, from the files the README quotes;
- the `mcplens` command of each front door: `--version`, `templates`, `check`, `events summary`,
  `events tail`, `events report`, on the events the README's tracked server quickstarts wrote.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "packaging"))
from version import version  # noqa: E402

PY_EXAMPLES = ROOT / "bindings-python" / "examples"
NODE_EXAMPLES = ROOT / "bindings-node" / "examples"
EVERYTHING = ROOT / "node_modules" / "@modelcontextprotocol" / "server-everything" / "dist" / "index.js"
SDK_SERVER = ROOT / "bindings-python" / "tests" / "servers" / "sdk_server.py"
FAST_SERVER = ROOT / "bindings-python" / "tests" / "servers" / "fast_server.py"

results: list[tuple[str, str | None]] = []


def check(name: str, test: Callable[[], None]) -> None:
    try:
        test()
    except (AssertionError, subprocess.SubprocessError, OSError, KeyError, ValueError) as e:
        results.append((name, f"{type(e).__name__}: {e}"))
        print(f"FAIL {name}: {e}", flush=True)
    else:
        results.append((name, None))
        print(f"ok   {name}", flush=True)


def clean_env(tmp: Path) -> dict[str, str]:
    """python3, node and npm, and nothing of Rust."""
    tools = tmp / "bin"
    tools.mkdir()
    for name, target in [
        ("python3", sys.executable),
        ("node", shutil.which("node")),
        ("npm", shutil.which("npm")),
        ("npx", shutil.which("npx")),
    ]:
        assert target, f"{name} is not installed"
        (tools / name).symlink_to(Path(target).resolve())
    env = {
        k: v for k, v in os.environ.items() if not k.startswith(("CARGO", "RUSTUP", "RUST", "VIRTUAL_ENV", "PYTHON"))
    }
    env.pop("NODE_PATH", None)
    env["PATH"] = f"{tools}:/usr/bin:/bin"
    env["MCPLENS"] = str(ROOT)
    for tool in ["cargo", "rustc", "rustup", "maturin"]:
        assert shutil.which(tool, path=env["PATH"]) is None, f"{tool} is on the clean PATH"
    return env


def run(env: dict[str, str], cwd: Path, *args: str | Path, code: int = 0) -> subprocess.CompletedProcess[str]:
    done = subprocess.run([str(a) for a in args], cwd=cwd, env=env, capture_output=True, text=True, timeout=180)
    assert done.returncode == code, (
        f"{' '.join(map(str, args))} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"
    )
    return done


def readme_install_block() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = re.search(r"<!-- test-dist -->\n```sh\n(.*?)```", readme, re.S)
    assert block, "README.md has no <!-- test-dist --> install block"
    return [line for line in block.group(1).splitlines() if line.strip() and not line.startswith("#")]


def events(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def main() -> None:
    v = version()
    tmp = Path(tempfile.mkdtemp(prefix="mcplens-test-dist-"))
    env = clean_env(tmp)
    project = tmp / "project"  # where the README's `cd your-project` goes
    project.mkdir()
    (project / "package.json").write_text('{"name": "your-project", "private": true}\n')

    # The README's install block, line by line (`make dist` is done; `cd` is the project folder).
    def install() -> None:
        for line in readme_install_block():
            if line.split("#")[0].strip() in ("make dist", "cd your-project"):
                continue
            done = subprocess.run(
                ["bash", "-c", line], cwd=project, env=env, capture_output=True, text=True, timeout=600
            )
            assert done.returncode == 0, f"{line!r} exited {done.returncode}:\n{done.stdout}\n{done.stderr}"

    check("the README's install block", install)
    venv = project / ".venv"
    py, py_mcplens = venv / "bin" / "python", venv / "bin" / "mcplens"
    node_mcplens = project / "node_modules" / ".bin" / "mcplens"

    # What the quickstarts need beside mcplens: the SDKs at the versions the packages are tested with.
    node_dev = json.loads((ROOT / "bindings-node" / "package.json").read_text())["devDependencies"]
    lines = ["@modelcontextprotocol/sdk", "@modelcontextprotocol/client", "@modelcontextprotocol/server", "zod"]
    sdks = [f"{name}@{node_dev[name]}" for name in lines]
    requirements = [ROOT / "bindings-python" / f"requirements-{name}.txt" for name in ("mcp2", "fastmcp4")]

    def beside() -> None:
        run(env, project, py, "-m", "pip", "install", "-q", *(a for r in requirements for a in ("-r", r)))
        run(env, project, "npm", "install", "--no-audit", "--no-fund", "--prefer-offline", *sdks)

    check("the SDKs beside it (pinned mcp 2.3 and fastmcp 4; the TypeScript SDK 1.x and v2, zod)", beside)

    def installed() -> None:
        where = run(env, project, py, "-c", "import mcplens; print(mcplens.__version__, mcplens.__file__)").stdout
        assert where.split()[0] == v, where
        assert where.split()[1].startswith(str(venv)), where
        resolved = run(env, project, "node", "-e", "console.log(require.resolve('mcplens-linux-x64-gnu'))").stdout
        assert resolved.strip().endswith("node_modules/mcplens-linux-x64-gnu/mcplens.linux-x64-gnu.node"), resolved
        assert not list((project / "node_modules" / "mcplens").glob("*.node")), "the main npm package carries an addon"

    check("installed from the artifacts (the venv's mcplens, the platform package's addon)", installed)

    for door, mcplens in [("pip", py_mcplens), ("npm", node_mcplens)]:

        def version_line(mcplens: Path = mcplens) -> None:
            assert run(env, project, mcplens, "--version").stdout.strip() == f"mcplens {v}"

        check(f"{door}: mcplens --version", version_line)
    check("npm: npx mcplens --version", lambda: run(env, project, "npx", "--no-install", "mcplens", "--version"))

    # Python README quickstarts, copied out of the repository so only the installed package is found.
    work = tmp / "py"
    work.mkdir()
    for name in ["quickstart.py", "server_quickstart.py", "agent_templates.py"]:
        shutil.copy(PY_EXAMPLES / name, work)
    fastmcp_work = tmp / "py-fastmcp"
    fastmcp_work.mkdir()
    shutil.copy(PY_EXAMPLES / "fastmcp_quickstart.py", fastmcp_work)

    def py_quickstart() -> None:
        out = run(env, work, py, "quickstart.py", py, SDK_SERVER, "paged").stdout.splitlines()
        assert out[0] == "mem://t0/{id} - t0", out
        assert out[-1] == "8 templates in 3 pages", out

    def py_agent_templates() -> None:
        out = run(env, work, py, "agent_templates.py", "--fill", "path=notes.txt", py, FAST_SERVER).stdout.splitlines()
        assert out[1:] == ["file:///notes.txt -> files {'path': 'notes.txt'}", "notes.txt"], out

    def py_fastmcp_quickstart() -> None:
        out = run(env, fastmcp_work, py, "fastmcp_quickstart.py", "--list").stdout.splitlines()
        assert out == ["note://{id} - note"], out
        recorded = events(fastmcp_work / "mcplens-events.jsonl")
        assert "mcp:resources/templates/list" in [e["type"] for e in recorded], recorded

    check("Python quickstart (client) against an mcp 2.3 server", py_quickstart)
    check("Python fastmcp quickstart (tracked fastmcp 4, listed through fastmcp.Client)", py_fastmcp_quickstart)
    check("Python template example against an mcp 2.3 MCPServer", py_agent_templates)

    # Node README quickstarts, in the npm folder.
    for name in ["quickstart.mjs", "quickstart-v2.mjs", "server-quickstart.mjs", "agent-templates.mjs"]:
        shutil.copy(NODE_EXAMPLES / name, project)
    node_v2_work = project / "v2-server"
    node_v2_work.mkdir()
    shutil.copy(NODE_EXAMPLES / "server-quickstart-v2.mjs", project)

    def node_quickstart() -> None:
        out = run(env, project, "node", "quickstart.mjs", "node", EVERYTHING, "stdio").stdout.splitlines()
        assert out[0] == "2 templates, 7 resources", out
        assert json.loads(out[-1])["resourceTemplates"][0]["server"] == "docs", out

    def node_agent_templates() -> None:
        out = run(env, project, "node", "agent-templates.mjs").stdout.splitlines()
        # Filled from the crm server's completions (the installed package's completion tool).
        assert out[1:] == ['crm://customers/1001 -> crm {"id":"1001"}', 'customer {"id":"1001"}'], out

    def node_quickstart_v2() -> None:
        out = run(env, project, "node", "quickstart-v2.mjs", "node", EVERYTHING, "stdio").stdout.splitlines()
        assert out[:3] == ["protocol 2025-11-25", "change notifications: unsolicited", "2 templates, 7 resources"], out

    def node_server_v2() -> None:
        server = ["node", project / "server-quickstart-v2.mjs"]
        out = run(env, node_v2_work, node_mcplens, "templates", "--json", "--server", "notes", "--", *server).stdout
        assert [t["uriTemplate"] for t in json.loads(out)["resourceTemplates"]] == ["note://{id}"], out
        recorded = events(node_v2_work / "mcplens-events.jsonl")
        assert "mcp:resources/templates/list" in [e["type"] for e in recorded], recorded

    check("Node quickstart (client) against server-everything", node_quickstart)
    check("Node quickstart (SDK v2 client) against server-everything", node_quickstart_v2)
    check("npm: mcplens templates against the README's tracked v2 server", node_server_v2)
    check("Node template example", node_agent_templates)

    # The mcplens command of each front door against the README's tracked server quickstarts, then
    # on the events those servers wrote.
    servers = {"pip": (work, [py, "server_quickstart.py"]), "npm": (project, ["node", "server-quickstart.mjs"])}
    for door, mcplens in [("pip", py_mcplens), ("npm", node_mcplens)]:
        cwd, server = servers[door]

        def templates(mcplens: Path = mcplens, cwd: Path = cwd, server: list = server) -> None:
            out = json.loads(run(env, cwd, mcplens, "templates", "--json", "--server", "notes", "--", *server).stdout)
            assert [t["uriTemplate"] for t in out["resourceTemplates"]] == ["note://{id}"], out

        def check_server(mcplens: Path = mcplens, cwd: Path = cwd, server: list = server) -> None:
            out = run(env, cwd, mcplens, "check", "--server", "notes", "--", *server).stdout
            assert "No problems: clients will list everything this server offers." in out, out

        def read_events(mcplens: Path = mcplens, cwd: Path = cwd) -> None:
            recorded = events(cwd / "mcplens-events.jsonl")
            listed = [e for e in recorded if e["type"] == "mcp:resources/templates/list"]
            assert len(listed) >= 2, recorded
            assert all(e["server"]["name"] == "notes" for e in listed), recorded
            summary = json.loads(run(env, cwd, mcplens, "events", "summary", "--json", "mcplens-events.jsonl").stdout)
            assert "mcp:resources/templates/list" in json.dumps(summary), summary
            tail = run(env, cwd, mcplens, "events", "tail", "-n", "2", "mcplens-events.jsonl").stdout.splitlines()
            assert len(tail) == 2, tail
            run(env, cwd, mcplens, "events", "report", "mcplens-events.jsonl", "-o", "report.html")
            assert 'data-metric="events"' in (cwd / "report.html").read_text(encoding="utf-8")

        check(f"{door}: mcplens templates against the README's tracked server", templates)
        check(f"{door}: mcplens check against the README's tracked server", check_server)
        check(f"{door}: mcplens events summary / tail / report on what it recorded", read_events)

    failed = [name for name, error in results if error]
    shutil.rmtree(tmp, ignore_errors=True)
    print(f"test-dist: {len(results) - len(failed)} passed, {len(failed)} failed")
    if failed:
        sys.exit(1)


if __name__ == "__main__":
    main()
