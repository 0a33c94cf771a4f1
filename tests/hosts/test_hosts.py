"""Real hosts drive `mcplens proxy` from each of its three commands (`make test-hosts`): Gemini CLI,
Codex CLI and opencode (pinned in `tests/hosts/package-lock.json`), each headless and offline
against `model_server.py`, a scripted model endpoint on loopback that speaks its protocol, with
`mcplens proxy --server everything --events EV -- server-everything stdio` in its MCP config
(`shared/reference/real-hosts.md`: how each runs that way). In each session the model is offered
the proxy's three tools, calls the templates tool and then the read tool, and gets the text read
back; the session ends normally, or by SIGTERM or Ctrl-C to the host once a tool's result reached
the model; then no process the proxy started is left and every call's event is on disk.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "lifecycle"))
sys.path.insert(0, str(Path(__file__).resolve().parent))
import model_server
from test_lifecycle import BOUND, COMMANDS, EVERYTHING, SERVER, marked
from test_lifecycle import command as command  # the fixture: the three commands that start the proxy

HERE = Path(__file__).resolve().parent
BIN = HERE / "node_modules" / ".bin"
# opencode's Linux x64 binary package (its npm wrapper names platform packages npm ci cannot find here).
OPENCODE = HERE / "node_modules" / "opencode-linux-x64-baseline" / "bin" / "opencode"
EXECUTABLES = {"gemini": BIN / "gemini", "codex": BIN / "codex", "opencode": OPENCODE}
PROMPT = "Read resource 1 of the everything server from its first resource template, and quote it."
TOOLS = ["ListMcpResourceTemplatesTool", "ListMcpResourcesTool", "ReadMcpResourceTool"]
SAID = "It says: Resource 1: This is a plaintext resource"


def serve_model(log: Path, read_uri: str = "", complete: str | None = None) -> tuple[subprocess.Popen[str], int]:
    log.touch()
    script = [sys.executable, str(HERE / "model_server.py"), str(log)]
    env = {**os.environ, "MODEL_READ_URI": read_uri, **({"MODEL_COMPLETE": complete} if complete is not None else {})}
    proc = subprocess.Popen(script, stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    return proc, int(proc.stdout.readline())


def stop_model(proc: subprocess.Popen[str]) -> None:
    proc.terminate()
    proc.wait(BOUND)
    assert proc.stdout is not None
    proc.stdout.close()


@pytest.fixture
def model(tmp_path: Path) -> Iterator[tuple[int, Path]]:
    log = tmp_path / "model.jsonl"
    proc, port = serve_model(log)
    yield port, log
    stop_model(proc)


def gemini(home: Path, port: int, proxy: list[str], mark: str) -> tuple[list[str], dict[str, str]]:
    (home / ".gemini").mkdir(parents=True)
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
    args = [str(BIN / "gemini"), "-p", PROMPT, "-o", "stream-json", "--approval-mode", "yolo", "-m", "gemini-2.5-flash"]
    return args, {"GEMINI_API_KEY": "offline", "GOOGLE_GEMINI_BASE_URL": f"http://127.0.0.1:{port}"}


def codex(home: Path, port: int, proxy: list[str], mark: str) -> tuple[list[str], dict[str, str]]:
    # `required = true`: Codex's first turn waits for the server (an optional one that has not listed
    # its tools within about a second is left out of that turn: openai/codex#31641). The Python
    # server behind the proxy starts in about 1.3 s on two busy cores, and was left out.
    codex_home = home / ".codex"
    codex_home.mkdir(parents=True)
    quoted = ", ".join(json.dumps(a) for a in proxy[1:])
    (codex_home / "config.toml").write_text(
        f"""model = "m"
model_provider = "fake"
approval_policy = "never"
sandbox_mode = "read-only"
check_for_update_on_startup = false

[analytics]
enabled = false

[model_providers.fake]
name = "fake"
base_url = "http://127.0.0.1:{port}/v1"
env_key = "FAKE_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[mcp_servers.everything]
command = {json.dumps(proxy[0])}
args = [{quoted}]
env = {{ MCPLENS_LIFECYCLE_MARK = {json.dumps(mark)} }}
startup_timeout_sec = 60
required = true
"""
    )
    args = [str(BIN / "codex"), "exec", "--skip-git-repo-check", "--ephemeral", "--json", PROMPT]
    return args, {"CODEX_HOME": str(codex_home), "FAKE_API_KEY": "offline"}


def opencode(home: Path, port: int, proxy: list[str], mark: str) -> tuple[list[str], dict[str, str]]:
    config = home / ".config"
    (config / "opencode").mkdir(parents=True)
    provider = {
        "npm": "@ai-sdk/openai-compatible",
        "options": {"baseURL": f"http://127.0.0.1:{port}/v1", "apiKey": "offline"},
        "models": {"m": {"tool_call": True, "limit": {"context": 100000, "output": 4096}}},
    }
    settings = {
        "autoupdate": False,
        "share": "disabled",
        "model": "fake/m",
        "small_model": "fake/m",
        "provider": {"fake": provider},
        "permission": {"*": "allow"},
        "mcp": {
            "everything": {
                "type": "local",
                "enabled": True,
                "command": proxy,
                "environment": {"MCPLENS_LIFECYCLE_MARK": mark},
            }
        },
    }
    (config / "opencode" / "opencode.json").write_text(json.dumps(settings))
    env = {
        "XDG_CONFIG_HOME": str(config),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        **{
            f"OPENCODE_DISABLE_{k}": "1"
            for k in ["MODELS_FETCH", "AUTOUPDATE", "LSP_DOWNLOAD", "SHARE", "CLAUDE_CODE", "DEFAULT_PLUGINS"]
        },
        # Its background `npm install` of a plugin goes nowhere (it goes on with a warning).
        "npm_config_registry": "http://127.0.0.1:9/",
    }
    return [str(OPENCODE), "run", "--format", "json", "-m", "fake/m", PROMPT], env


HOSTS: dict[str, Callable[[Path, int, list[str], str], tuple[list[str], dict[str, str]]]] = {
    "gemini": gemini,
    "codex": codex,
    "opencode": opencode,
}


def results_seen(log: Path) -> int:
    """How many tool results the host has passed back to the model so far. Only whole lines: the
    model server may be writing the last one (a long request's line takes more than one write, and
    a read in between saw half of it)."""
    seen = 0
    for line in log.read_text().split("\n")[:-1]:
        body = json.dumps(json.loads(line)["body"])
        seen = max(seen, body.count("resourceTemplates") + body.count("--- content 1 text"))
    return seen


ENDS = ["normal", "sigterm", "sigint"]
# Every pair of command, host and ending, once each (a Latin square: nine sessions, where the whole
# product is 27 of 5 to 10 s each): every host runs every command and is ended every way, and every
# command is ended every way; the lifecycle suite ends each command as each host does, every way.
SESSIONS = [(list(COMMANDS)[(h + e) % 3], host, end) for h, host in enumerate(HOSTS) for e, end in enumerate(ENDS)]
assert len(COMMANDS) == len(HOSTS) == len(ENDS) == 3, "the square is three commands, hosts and endings"


@pytest.mark.skipif(not EVERYTHING.exists(), reason="npm ci installs server-everything")
# `command` is the lifecycle suite's fixture, given each session's command by name.
@pytest.mark.parametrize(("command", "host", "end"), SESSIONS, indirect=["command"])
def test_a_real_host_reads_a_template_through_the_proxy_and_leaves_nothing(
    host: str, command: list[str], end: str, model: tuple[int, Path], tmp_path: Path
) -> None:
    assert EXECUTABLES[host].exists(), "`make test-hosts` installs the hosts (npm ci in tests/hosts)"
    port, log = model
    mark = uuid.uuid4().hex
    events = tmp_path / "events.jsonl"
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
    home = tmp_path / "home"
    args, extra = HOSTS[host](home, port, proxy, mark)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "HOME": str(home), "NO_COLOR": "1", **extra}
    proc = subprocess.Popen(
        args, cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    out: list[str] = []
    err: list[str] = []
    readers = [
        threading.Thread(target=lambda s, into: into.extend(s), args=(stream, into), daemon=True)
        for stream, into in ((proc.stdout, out), (proc.stderr, err))
    ]
    for r in readers:
        r.start()
    if end != "normal":
        # Once the first tool's result reached the model, the user ends the host.
        deadline = time.monotonic() + BOUND * 3
        while results_seen(log) < 1 and proc.poll() is None:
            assert time.monotonic() < deadline, "the first tool result never reached the model"
            time.sleep(0.02)
        proc.send_signal(signal.SIGTERM if end == "sigterm" else signal.SIGINT)
    proc.wait(BOUND * 3)
    for r in readers:
        r.join(BOUND)
    assert proc.stdout is not None
    assert proc.stderr is not None
    proc.stdout.close()
    proc.stderr.close()
    said = "".join(out)

    requests = [json.loads(line) for line in log.read_text().splitlines()]
    offered = json.dumps([r["body"].get("tools") for r in requests])
    for tool in TOOLS:
        assert f"mcplens_{tool}" in offered, f"{tool} was not offered: {offered[:500]}"
    if end == "normal":
        assert proc.returncode == 0, "".join(err)[-2000:]
        # The read's text reached the model, and the model's answer the user.
        assert "Resource 1: This is a plaintext resource" in json.dumps(requests[-1]["body"])
        assert SAID in said, said[-2000:]

    deadline = time.monotonic() + BOUND
    while (left := marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == [], f"processes left behind: {left}"
    types = [json.loads(line)["type"] for line in events.read_text().splitlines()]
    assert types[0] == "mcp:initialize", types
    # Every call whose result reached the model is on disk (one the host was ended during may be too).
    assert types.count("mcp:tools/call") >= results_seen(log), types
    if end == "normal":
        assert types.count("mcp:tools/call") == 2, types


def one_turn(host: str, tmp_path: Path, port: int, server: list[str]) -> subprocess.CompletedProcess[str]:
    """`host` runs one headless turn against the model on `port`, with `server` behind the Rust
    `mcplens proxy` (untracked); it must end with exit code 0."""
    proxy = [*COMMANDS["rust"], "proxy", "--server", "everything", "--no-tracking", "--", *server]
    args, extra = HOSTS[host](tmp_path / "home", port, proxy, uuid.uuid4().hex)
    work = tmp_path / "work"
    work.mkdir()
    env = {**os.environ, "HOME": str(tmp_path / "home"), "NO_COLOR": "1", **extra}
    done = subprocess.run(
        args,
        cwd=work,
        env=env,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=BOUND * 3,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return done


@pytest.mark.parametrize("host", list(HOSTS))
def test_what_a_host_passes_on_of_a_long_read_begins_with_the_note_and_the_document(host: str, tmp_path: Path) -> None:
    """A model reads a 120,000-character resource through the proxy (its default 10,000-character
    cap): what the host passes back to the model holds the whole header line — the truncation note
    first — and the document's first lines, in lines. The figures (characters of the read's output
    that reached the model) are printed for docs/proxy.md."""
    assert EXECUTABLES[host].exists(), "`make test-hosts` installs the hosts (npm ci in tests/hosts)"
    log = tmp_path / "model.jsonl"
    proc, port = serve_model(log, read_uri="book://long")
    try:
        one_turn(host, tmp_path, port, [sys.executable, str(SERVER)])
    finally:
        stop_model(proc)
    last = [json.loads(line) for line in log.read_text().splitlines()][-1]
    results = model_server.results_of(last["path"], last["body"])
    assert results, "the read's result reached the model"
    passed = results[-1][1]
    start = passed.index('{"truncated":{"textChars":')
    header = passed[start:].split("\n", 1)[0]
    assert json.loads(header)["truncated"]["maxOutputChars"] == 10_000, header
    body = passed[start + len(header) :]
    assert body.startswith("\n--- content 1 text ("), body[:200]
    assert "\nline 0000: the quick brown fox" in body, body[:300]
    assert "\nline 0001:" in body, "the text keeps its lines"
    shown = json.loads(header)["truncated"]["shownChars"]
    text = body.split(" ---\n", 1)[1]
    assert len(text) >= shown, f"all the text the proxy showed reached the model: {len(text)} of {shown}"
    print(f"\n{host}: {len(passed) - start} characters of the read's output reached the model ({shown} of text)")


@pytest.mark.skipif(not EVERYTHING.exists(), reason="npm ci installs server-everything")
@pytest.mark.parametrize("host", list(HOSTS))
def test_a_real_host_completes_a_template_variable_and_reads_the_filled_uri(host: str, tmp_path: Path) -> None:
    """The four tools in one turn through the proxy: the model lists server-everything's templates,
    asks the completion tool which `resourceId` fits what it typed (`3`), fills the template with the
    suggestion and reads it; the host passes the read's text back and the answer to the user."""
    assert EXECUTABLES[host].exists(), "`make test-hosts` installs the hosts (npm ci in tests/hosts)"
    log = tmp_path / "model.jsonl"
    proc, port = serve_model(log, complete="3")
    try:
        done = one_turn(host, tmp_path, port, ["node", str(EVERYTHING), "stdio"])
    finally:
        stop_model(proc)
    requests = [json.loads(line) for line in log.read_text().splitlines()]
    offered = [json.dumps(r["body"].get("tools")) for r in requests if r["body"].get("tools")]
    assert "mcplens_CompleteMcpResourceTemplateTool" in offered[0], "offered from the first turn"
    results = model_server.results_of(requests[-1]["path"], requests[-1]["body"])
    assert len(results) == 3, results  # the templates listing, the completion, the read
    completed = results[1][1]
    assert '"values":["3"]' in completed, completed[:500]
    assert "Resource 3: This is a plaintext resource" in results[-1][1], results[-1][1][:500]
    assert "It says: Resource 3: This is a plaintext resource" in done.stdout, done.stdout[-2000:]
