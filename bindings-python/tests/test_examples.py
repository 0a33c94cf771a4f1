"""The README's code blocks are the example files, and the example files run."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1]
EXAMPLES = PACKAGE / "examples"


@pytest.mark.parametrize("name", ["quickstart.py", "agent_tool.py", "pager.py"])
def test_readme_quotes_the_example(name: str) -> None:
    readme = (PACKAGE / "README.md").read_text(encoding="utf-8")
    assert f"```python\n{(EXAMPLES / name).read_text(encoding='utf-8')}```" in readme


def run(*args: str) -> str:
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_quickstart_against_a_real_server() -> None:
    server = PACKAGE / "tests" / "servers" / "sdk_server.py"
    out = run(str(EXAMPLES / "quickstart.py"), sys.executable, str(server), "paged").splitlines()
    assert out[0] == "mem://t0/{id} - t0"
    assert out[-1] == "8 templates in 3 pages"


def test_pager_example() -> None:
    assert run(str(EXAMPLES / "pager.py")) == "['file:///{path}', 'db://{table}/{id}']\n"


def test_agent_tool_pages_through_the_listing() -> None:
    server = PACKAGE / "tests" / "servers" / "sdk_server.py"
    out = [
        json.loads(line)
        for line in run(str(EXAMPLES / "agent_tool.py"), sys.executable, str(server), "paged").splitlines()
    ]
    assert [len(page["resourceTemplates"]) for page in out] == [5, 3]
    assert [page.get("nextOffset") for page in out] == [5, None]
    assert {t["server"] for page in out for t in page["resourceTemplates"]} == {"docs"}


def test_agent_templates_expands_and_routes_back() -> None:
    server = PACKAGE / "tests" / "servers" / "fast_server.py"
    example = str(EXAMPLES / "agent_templates.py")
    out = run(example, "--fill", "path=notes.txt", sys.executable, str(server)).splitlines()
    listing = json.loads(out[0])
    assert [(r["uri"], r["server"]) for r in listing["resources"]] == [("docs://guide", "files")]
    assert listing["total"] == 1
    assert out[1:] == ["file:///notes.txt -> files {'path': 'notes.txt'}", "notes.txt"]


def test_agent_templates_fills_from_the_servers_completions() -> None:
    """A server that offers completion says which values exist: each variable is completed in turn,
    the folder chosen first going as context for the note's name (no --fill needed)."""
    server = PACKAGE / "tests" / "servers" / "complete_server.py"
    out = run(str(EXAMPLES / "agent_templates.py"), sys.executable, str(server)).splitlines()
    assert out[1:] == [
        "notes://work/launch -> files {'folder': 'work', 'name': 'launch'}",
        "work/launch: the launch moved to Tuesday.",
    ]


def failed(*args: str) -> str:
    done = subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 1, (done.stdout, done.stderr)
    assert "Traceback" not in done.stderr, done.stderr
    return done.stderr.strip()


def test_agent_templates_ends_with_a_message_when_it_cannot_fill() -> None:
    """It used to fill every variable with "notes.txt" and end with a traceback (IndexError with no
    template, McpError on a value that names nothing): now it fills only with values that exist."""
    example = str(EXAMPLES / "agent_templates.py")
    fast = str(PACKAGE / "tests" / "servers" / "fast_server.py")
    # The last line (the server's own log lines come first on mcp 1.x: its stderr is inherited).
    assert failed(example, sys.executable, fast).splitlines()[-1] == (
        "cannot fill a template: no listed resource fits file:///{path}: give --fill path=VALUE"
    )
