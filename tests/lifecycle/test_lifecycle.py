"""`mcplens proxy` in its host's hands, from each of the three commands that start it — the Rust
binary, the wheel's `mcplens`, the npm package's `bin/mcplens.cjs` — spawned as hosts spawn a
server and ended as the real hosts end one (`shared/reference/real-hosts.md`):

- Codex: SIGTERM to the process group, SIGKILL 1.5 ms later;
- Claude Code: SIGINT, SIGTERM ~100 ms later, SIGKILL ~400 ms after that;
- Gemini CLI: one SIGTERM, and it does not wait;
- opencode: closes stdin, and SIGTERMs the server;
- and plainly: SIGTERM (143), SIGINT (130), stdin's end (0).

After every end: the proxy has exited, no process it started is left (every process carrying
this test's mark in its environment is gone), and every event of the session is in the file.
The servers: `lifecycle_server.py` (the Python `mcp` SDK: logs on stderr, a tool named like the
proxy's, a 2 MB resource, a tool that never answers) and `@modelcontextprotocol/server-everything`
(which asks the host for `roots/list` and waits for the answer).

Waits here are bounds that turn a hang into a failure, never timings that must be met; the one
pause (`SETTLED`) gives the tracker ten times the 50 ms it promises to take when idle.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SERVER = Path(__file__).with_name("lifecycle_server.py")
EVERYTHING = ROOT / "node_modules/@modelcontextprotocol/server-everything/dist/index.js"
BOUND = 20.0  # seconds: a hang becomes a failure
SETTLED = 0.5  # seconds after the last answer: the tracker promises 50 ms when idle
OURS = ["mcplens_ListMcpResourceTemplatesTool", "mcplens_ListMcpResourcesTool", "mcplens_ReadMcpResourceTool"]


def _commands() -> dict[str, list[str]]:
    target = Path(os.environ.get("CARGO_TARGET_DIR", ROOT / "target"))
    return {
        "rust": [os.environ.get("MCPLENS_BIN", str(target / "debug" / "mcplens"))],
        "wheel": [str(Path(sys.executable).parent / "mcplens")],
        "npm": ["node", str(ROOT / "bindings-node" / "bin" / "mcplens.cjs")],
    }


COMMANDS = _commands()


@pytest.fixture(params=list(COMMANDS))
def command(request: pytest.FixtureRequest) -> list[str]:
    cmd = COMMANDS[request.param]
    if cmd[0] != "node":
        assert Path(cmd[0]).exists(), f"{cmd[0]} is missing: `make test-lifecycle` builds it"
    return cmd


def marked(mark: str) -> list[int]:
    """The processes whose environment carries `mark` (the proxy and everything it started)."""
    pids = []
    needle = f"MCPLENS_LIFECYCLE_MARK={mark}".encode()
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes()
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if needle in env.split(b"\0") and state != "Z":
            pids.append(int(entry.name))
    return pids


class Host:
    """A host: spawns the proxy in a session of its own (as Codex does, so its group can be
    signalled), speaks newline-delimited JSON-RPC on its stdin and stdout."""

    def __init__(self, command: list[str], args: list[str], tmp: Path) -> None:
        self.mark = uuid.uuid4().hex
        self.events = tmp / "events.jsonl"
        self.stderr_path = tmp / "stderr.txt"
        env = {**os.environ, "MCPLENS_LIFECYCLE_MARK": self.mark}
        with open(self.stderr_path, "wb") as err:
            self.proc = subprocess.Popen(
                [*command, "proxy", "--events", str(self.events), *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=err,
                cwd=tmp,
                env=env,
                start_new_session=True,
            )
        self.lines: queue.Queue[bytes] = queue.Queue()
        self.others: list[dict[str, Any]] = []
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(message).encode() + b"\n")
        self.proc.stdin.flush()

    def answer(self, rid: Any) -> dict[str, Any]:
        deadline = time.monotonic() + BOUND
        while True:
            line = self.lines.get(timeout=max(0.0, deadline - time.monotonic()))
            assert line, f"the proxy closed its stdout before answering {rid}: {self.stderr()}"
            message = json.loads(line)
            if "method" not in message and message.get("id") == rid:
                return message
            self.others.append(message)

    def request(self, rid: Any, method: str, params: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": rid, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return self.answer(rid)

    def handshake(self, capabilities: dict[str, Any] | None = None) -> dict[str, Any]:
        params = {
            "protocolVersion": "2025-06-18",
            "capabilities": capabilities or {},
            "clientInfo": {"name": "lifecycle-host", "version": "1"},
        }
        answer = self.request(0, "initialize", params)
        self.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        return answer

    def call(self, rid: Any, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
        return self.request(rid, "tools/call", {"name": name, "arguments": arguments})

    def stderr(self) -> str:
        return self.stderr_path.read_text(errors="replace")

    def end(self, how: str) -> int | None:
        """Ends the proxy as `how`'s host does; returns its exit code (negative: the signal that
        killed it), or None when the host does not wait (Gemini CLI)."""
        p = self.proc
        assert p.stdin is not None
        if how == "stdin":
            p.stdin.close()
        elif how == "sigterm":
            p.send_signal(signal.SIGTERM)
        elif how == "sigint":
            p.send_signal(signal.SIGINT)
        elif how == "codex":
            os.killpg(p.pid, signal.SIGTERM)
            time.sleep(0.0015)
            p.kill()
        elif how == "claude":
            p.send_signal(signal.SIGINT)
            time.sleep(0.1)
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
            time.sleep(0.4)
            if p.poll() is None:
                p.kill()
        elif how == "gemini":
            p.send_signal(signal.SIGTERM)
        elif how == "opencode":
            p.stdin.close()
            p.send_signal(signal.SIGTERM)
        else:
            raise AssertionError(how)
        code = p.wait(BOUND)
        self.reader.join(BOUND)  # the proxy's stdout ends with it (and every process it started)
        assert p.stdout is not None
        p.stdout.close()
        if not p.stdin.closed:
            p.stdin.close()
        return code

    def assert_nothing_left(self) -> None:
        deadline = time.monotonic() + BOUND
        while (left := marked(self.mark)) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert left == [], f"processes left behind: {left}"

    def event_types(self) -> list[str]:
        if not self.events.exists():
            return []
        return [json.loads(line)["type"] for line in self.events.read_text().splitlines() if line.strip()]


def session(host: Host) -> None:
    """What a host does in a session: the handshake, the tools, a call of the server's tool."""
    host.handshake()
    tools = [t["name"] for t in host.request(1, "tools/list")["result"]["tools"]]
    assert "echo" in tools
    answer = host.call(2, "echo", {"message": "hi"})
    assert answer["result"]["content"][0]["text"] == "hi"


# opencode closes stdin and sends SIGTERM at once: whichever the proxy sees first ends it.
EXPECTED = {"stdin": {0}, "sigterm": {143}, "sigint": {130}, "gemini": {143}, "opencode": {0, 143}}


@pytest.mark.parametrize("how", ["stdin", "sigterm", "sigint", "codex", "claude", "gemini", "opencode"])
def test_the_proxy_ends_as_hosts_end_it_with_every_event_written_and_no_process_left(
    command: list[str], how: str, tmp_path: Path
) -> None:
    host = Host(command, ["--", sys.executable, str(SERVER)], tmp_path)
    session(host)
    time.sleep(SETTLED)
    code = host.end(how)
    if how in EXPECTED:
        assert code in EXPECTED[how], host.stderr()
    elif how == "claude":
        assert code == 130, f"ended by its SIGINT, within the host's 500 ms: {code}; {host.stderr()}"
    host.assert_nothing_left()
    assert host.event_types()[:3] == ["mcp:initialize", "mcp:tools/list", "mcp:tools/call"], host.stderr()


def test_the_servers_stderr_is_the_hosts_and_never_its_stdout(command: list[str], tmp_path: Path) -> None:
    host = Host(command, ["--", sys.executable, str(SERVER)], tmp_path)
    session(host)
    host.call(3, "echo", {"message": "x" * 10})
    assert host.end("stdin") == 0
    said = host.stderr()
    assert "lifecycle-server: starting" in said, said
    assert "lifecycle-server: echo 10 chars" in said, said
    assert not any("lifecycle-server" in json.dumps(m) for m in host.others)


def test_a_server_tool_named_like_the_proxys_stays_reachable(command: list[str], tmp_path: Path) -> None:
    host = Host(command, ["--", sys.executable, str(SERVER)], tmp_path)
    host.handshake()
    names = [t["name"] for t in host.request(1, "tools/list")["result"]["tools"]]
    assert len(names) == len(set(names)), names
    assert "mcplens_ReadMcpResourceTool" in names, names
    assert "mcplens_ReadMcpResourceTool_2" in names, names
    theirs = host.call(2, "mcplens_ReadMcpResourceTool", {})
    assert theirs["result"]["content"][0]["text"] == "the server's own tool", theirs
    ours = host.call(3, "mcplens_ReadMcpResourceTool_2", {"uri": "notes://first"})
    assert "line one" in ours["result"]["content"][0]["text"], ours
    assert host.end("stdin") == 0
    said = host.stderr()
    assert said.count("mcplens_ReadMcpResourceTool_2") == 1, said
    assert "--tool-prefix" in said, said


def test_an_answer_over_the_bound_is_an_error_answer_not_a_hang(command: list[str], tmp_path: Path) -> None:
    host = Host(command, ["--max-message-bytes", "100000", "--", sys.executable, str(SERVER)], tmp_path)
    host.handshake()
    host.request(0, "tools/list")
    direct = host.request(1, "resources/read", {"uri": "big://blob"})
    assert direct["error"]["code"] == -32603, direct
    assert "--max-message-bytes" in direct["error"]["message"], direct
    # The proxy's read tool, called before any listing tool: the catalog is made current first.
    ours = host.call(2, "mcplens_ReadMcpResourceTool_2", {"uri": "big://blob"})
    assert ours["result"]["isError"] is True
    assert ours["result"]["content"][0]["text"].startswith("error: message_too_large: "), ours
    assert host.end("sigterm") == 143


def test_a_request_the_server_never_answers_does_not_hold_the_end(command: list[str], tmp_path: Path) -> None:
    host = Host(command, ["--", sys.executable, str(SERVER)], tmp_path)
    host.handshake()
    host.send({"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "hang", "arguments": {}}})
    time.sleep(SETTLED)
    assert host.end("sigterm") == 143
    host.assert_nothing_left()


@pytest.mark.skipif(not EVERYTHING.exists(), reason="npm ci installs server-everything")
@pytest.mark.parametrize("how", ["stdin", "claude"])
def test_a_server_waiting_on_the_host_ends_with_the_host(command: list[str], how: str, tmp_path: Path) -> None:
    host = Host(command, ["--server", "everything", "--", "node", str(EVERYTHING), "stdio"], tmp_path)
    # The host declares roots and never answers the server's roots/list.
    host.handshake({"roots": {"listChanged": True}})
    deadline = time.monotonic() + BOUND
    while not any(m.get("method") == "roots/list" for m in host.others):
        assert time.monotonic() < deadline, "server-everything asks for roots"
        host.request(f"p{len(host.others)}", "ping")
    host.end(how)
    host.assert_nothing_left()


@pytest.mark.parametrize("end", ["close", "sigterm", "sigint"])
def test_a_node_host_spawns_and_ends_the_proxy(command: list[str], end: str, tmp_path: Path) -> None:
    """The TypeScript SDK's StdioClientTransport as the host: it pipes the proxy's stderr, and ends
    it by closing stdin (SIGTERM only after 2 s), or by SIGTERM or SIGINT first: the proxy and its
    server are gone at once, every event is on disk, the server's log lines reached the host's
    stderr pipe."""
    mark = uuid.uuid4().hex
    events = tmp_path / "events.jsonl"
    host = [
        "node",
        str(Path(__file__).with_name("node_host.mjs")),
        *command,
        "proxy",
        "--events",
        str(events),
        "--",
        sys.executable,
        str(SERVER),
    ]
    done = subprocess.run(
        host,
        capture_output=True,
        text=True,
        timeout=BOUND * 3,
        env={**os.environ, "MCPLENS_LIFECYCLE_MARK": mark, "NODE_HOST_END": end},
        cwd=tmp_path,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert "echo" in out["tools"], out["tools"]
    assert "mcplens_ReadMcpResourceTool_2" in out["tools"], out["tools"]
    assert out["echo"] == "hi"
    assert "line one" in out["read"], out["read"]
    assert out["closeMs"] < 1000, f"ended at once, not by the SDK's SIGTERM 2 s later: {out['closeMs']} ms"
    assert "lifecycle-server: starting" in out["stderr"]
    assert "lifecycle-server: echo 2 chars" in out["stderr"]
    deadline = time.monotonic() + BOUND
    while (left := marked(mark)) and time.monotonic() < deadline:
        time.sleep(0.02)
    assert left == [], f"processes left behind: {left}"
    types = [json.loads(line)["type"] for line in events.read_text().splitlines()]
    assert types[:2] == ["mcp:initialize", "mcp:tools/list"], types
    assert types.count("mcp:tools/call") == 2, types
