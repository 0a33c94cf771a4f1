"""Real hosts drive `mcplens proxy` from each of its three commands (`make test-hosts`): Gemini CLI
(pinned in `tests/hosts/package.json`), headless and offline against `model_server.py`, a scripted
model endpoint on loopback that speaks its protocol, with `mcplens proxy --server everything
--events EV -- server-everything stdio` in its MCP config (`shared/reference/real-hosts.md` has how
each host runs that way). In each session the model is offered the proxy's tools, calls the
templates tool and the read tool, and gets the text read back; the session ends normally, or by
SIGTERM or Ctrl-C to the host once a tool ran; then no process the proxy started is left and
every event of a call that completed is on disk.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lifecycle"))
from test_lifecycle import BOUND, COMMANDS, EVERYTHING, marked

HERE = Path(__file__).resolve().parent
GEMINI = HERE / "node_modules" / ".bin" / "gemini"
PROMPT = "Read resource 1 of the everything server from its first resource template, and quote it."


@pytest.fixture(params=list(COMMANDS))
def command(request: pytest.FixtureRequest) -> list[str]:
    cmd = COMMANDS[request.param]
    if cmd[0] != "node":
        assert Path(cmd[0]).exists(), f"{cmd[0]} is missing: `make test-hosts` builds it"
    return cmd


@pytest.fixture
def model(tmp_path: Path):  # type: ignore[no-untyped-def]
    log = tmp_path / "model.jsonl"
    proc = subprocess.Popen(
        [sys.executable, str(HERE / "model_server.py"), str(log)], stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    port = int(proc.stdout.readline())
    yield port, log
    proc.terminate()
    proc.wait(BOUND)
    proc.stdout.close()


def gemini_home(tmp_path: Path, command: list[str], events: Path, mark: str) -> Path:
    home = tmp_path / "home"
    (home / ".gemini").mkdir(parents=True)
    proxy = [
        *command,
        "proxy",
        "--server",
        "everything",
        "--events",
        str(events),
        "--",
        "node",
        str(EVERYTHING),
        "stdio",
    ]
    settings = {
        "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
        "privacy": {"usageStatisticsEnabled": False},
        "telemetry": {"enabled": False},
        "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
        "mcpServers": {
            "everything": {
                "command": proxy[0],
                "args": proxy[1:],
                "trust": True,
                "env": {"MCPLENS_LIFECYCLE_MARK": mark},
            }
        },
    }
    (home / ".gemini" / "settings.json").write_text(json.dumps(settings))
    return home


@pytest.mark.skipif(not GEMINI.exists(), reason="`make test-hosts` installs Gemini CLI (npm ci in tests/hosts)")
@pytest.mark.skipif(not EVERYTHING.exists(), reason="npm ci installs server-everything")
@pytest.mark.parametrize("end", ["normal", "sigterm", "sigint"])
def test_gemini_cli_reads_a_template_through_the_proxy_and_leaves_nothing(
    command: list[str], end: str, model: tuple[int, Path], tmp_path: Path
) -> None:
    port, log = model
    mark = uuid.uuid4().hex
    events = tmp_path / "events.jsonl"
    home = gemini_home(tmp_path, command, events, mark)
    work = tmp_path / "work"
    work.mkdir()
    env = {
        **os.environ,
        "HOME": str(home),
        "GEMINI_API_KEY": "offline",
        "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{port}",
        "NO_COLOR": "1",
    }
    args = [str(GEMINI), "-p", PROMPT, "-o", "stream-json", "--approval-mode", "yolo", "-m", "gemini-2.5-flash"]
    host = subprocess.Popen(args, cwd=work, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert host.stdout is not None
    out: list[dict] = []
    signalled = False
    for line in host.stdout:  # to its end: what the host says after the signal counts too
        if not line.startswith("{"):
            continue
        out.append(json.loads(line))
        if end != "normal" and not signalled and out[-1].get("type") == "tool_result":
            host.send_signal(signal.SIGTERM if end == "sigterm" else signal.SIGINT)
            signalled = True
    host.stdout.close()
    host.wait(BOUND * 3)
    assert host.stderr is not None
    host.stderr.close()

    requests = [json.loads(line) for line in log.read_text().splitlines()]
    offered = {d["name"] for t in requests[0]["body"].get("tools", []) for d in t.get("functionDeclarations", [])}
    for tool in ("ListMcpResourceTemplatesTool", "ListMcpResourcesTool", "ReadMcpResourceTool"):
        assert f"mcp_everything_mcplens_{tool}" in offered, sorted(offered)
    used = [e.get("tool_name") for e in out if e.get("type") == "tool_use"]
    assert used[:1] == ["mcp_everything_mcplens_ListMcpResourceTemplatesTool"], out
    if end == "normal":
        assert host.returncode == 0
        assert used == [
            "mcp_everything_mcplens_ListMcpResourceTemplatesTool",
            "mcp_everything_mcplens_ReadMcpResourceTool",
        ], out
        # The read's text reached the model, and the model's answer the user.
        assert "Resource 1: This is a plaintext resource" in json.dumps(requests[-1]["body"]["contents"][-1])
        said = "".join(e.get("content", "") for e in out if e.get("type") == "message" and e.get("role") == "assistant")
        assert said.startswith("It says: Resource 1: This is a plaintext resource"), said

    deadline = time.monotonic() + BOUND
    while (left := marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == [], f"processes left behind: {left}"
    types = [json.loads(line)["type"] for line in events.read_text().splitlines()]
    assert types[0] == "mcp:initialize", types
    # Every call whose result the host got is on disk (a call the host was ended during may be too).
    assert types.count("mcp:tools/call") >= len([e for e in out if e.get("type") == "tool_result"]), (types, out)
