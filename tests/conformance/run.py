#!/usr/bin/env python3
"""External conformance: `@modelcontextprotocol/conformance` (pinned) against our tracked servers.

For each fixture server (TypeScript SDK 1.x and v2 `McpServer`, Python mcp 1.x `FastMCP`, Python
mcp 2.x `MCPServer`, all in `servers/`) it runs `conformance server --suite active` twice, plain and tracked
with mcplens, and gates on (`ts-proxy`: the TS fixtures over stdio behind `servers/bridge.mjs`, plain, and
behind the bridge and `mcplens proxy`, tracked; the proxy's own tools set aside in the comparison):

1. both runs exit 0 (with the server's committed expected-failures baseline, `baselines/<server>.yml`);
2. their normalised `checks.json` are identical (timestamps, ports, session and event ids stripped);
3. the tracked run's JSONL holds exactly the operations per event type in `expected-ops.json`
   (a conformance pass alone does not prove the tracker ran);
4. the negative controls (the tracked TS server under `servers/mutating-wrapper.mjs`): dropping
   `mimeType` from `resources/read` makes the suite FAIL; changing `tools/call` text (which the suite
   does not check) makes the normalised checks.json differ from the plain run;
5. client mode (`conformance client --scenario initialize|tools_call`) passes with our discovery
   helpers in the client (`clients/`), which must not break the session on a server without resources.

The suite runs on the Node 22 of `harness/node_modules/node` (installed by `npm ci --prefix
tests/conformance/harness`; only the harness gets it on PATH); the servers and clients run on the
project's Node and Python venvs. Output goes to `out/` (one directory per run). Exit 1 on any gate.
"""

from __future__ import annotations

import argparse
import collections
import concurrent.futures
import difflib
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
HARNESS = HERE / "harness"
NODE22_BIN = HARNESS / "node_modules" / "node" / "bin"
SUITE_DIR = HARNESS / "node_modules" / "@modelcontextprotocol" / "conformance"
SUITE_VERSION = "0.1.16"
SCENARIOS = ("initialize", "tools_call")
# The suite's mock servers advertise no `resources` capability: the helpers must not even ask.
MOCK_DISCOVERY = {"support": "no_capability", "items": 0, "requests": 0}
ADD_NUMBERS = "The sum of 2 and 3 is 5"


@dataclass(frozen=True)
class Server:
    name: str
    label: str
    command: tuple[str, ...]
    child: tuple[str, ...] = ()  # bridge.mjs: the stdio server it runs per session (after `--`)
    added_tools: str | None = None  # the tracked run's tools/list also has tools named with this prefix
    plain: str | None = None  # no plain run of its own: this server's plain run is its counterpart


@dataclass
class Run:
    """One suite run against one server process."""

    server: Server
    mode: str  # plain | tracked | control-mime | control-text
    dir: Path
    rc: int | None = None
    checks: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    normalised: dict[str, Any] = field(default_factory=dict)
    ops: collections.Counter[str] | None = None
    added: int = 0  # tools named with `server.added_tools`, left out of `normalised`
    seconds: float = 0.0
    error: str | None = None

    @property
    def key(self) -> str:
        return f"{self.server.name}-{self.mode}"

    def count(self, status: str) -> int:
        return sum(c.get("status") == status for cs in self.checks.values() for c in cs)


@dataclass
class ClientRun:
    name: str
    command: str
    scenario: str
    dir: Path
    rc: int | None = None
    passed: int = 0
    total: int = 0
    report: dict[str, Any] | None = None
    seconds: float = 0.0


_ports_lock = threading.Lock()
_ports: set[int] = set()


def free_port() -> int:
    with _ports_lock:
        while True:
            with socket.socket() as s:
                s.bind(("127.0.0.1", 0))
                port = int(s.getsockname()[1])
            if port not in _ports:
                _ports.add(port)
                return port


def wait_ready(port: int, proc: subprocess.Popen[bytes], timeout: float) -> str | None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return f"exited with {proc.returncode} before listening"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.5):
                return None
        except OSError:
            time.sleep(0.05)
    return f"not listening after {timeout:.0f} s"


def tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(errors="replace").splitlines()
    except OSError:
        return ""
    return "\n".join("      " + line for line in text[-lines:])


def harness_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{NODE22_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["NO_COLOR"] = "1"
    return env


def suite(*args: str, log: Path, timeout: float) -> int:
    """Runs the pinned suite on Node 22; its output goes to `log`."""
    cmd = [str(NODE22_BIN / "node"), str(SUITE_DIR / "dist" / "index.js"), *args]
    with log.open("wb") as out:
        try:
            return subprocess.run(
                cmd, stdout=out, stderr=subprocess.STDOUT, env=harness_env(), timeout=timeout
            ).returncode
        except subprocess.TimeoutExpired:
            out.write(f"\n[run.py] suite timed out after {timeout:.0f} s\n".encode())
            return 124


# ---------------------------------------------------------------------------------------------
# checks.json: read and normalise.

_SCENARIO_DIR = re.compile(r"^(?:server|client)-(?P<name>.+)-\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z$")
_VOLATILE = [
    (re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b", re.I), "<uuid>"),
    (re.compile(r"\b[0-9a-f]{32}\b", re.I), "<hex-id>"),
    (re.compile(r"\b(?:evt|ses)_[A-Za-z0-9]+\b"), "<mcplens-id>"),
    (re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)"), "<time>"),
]
_VOLATILE_KEYS = {"timestamp"}


def read_checks(results: Path) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for d in sorted(results.iterdir()) if results.is_dir() else ():
        m = _SCENARIO_DIR.match(d.name)
        f = d / "checks.json"
        if m and f.is_file():
            out[m["name"]] = json.loads(f.read_text())
    return out


def normalise(value: Any, port: int, added: str | None = None, counted: list[int] | None = None) -> Any:
    """`value` without what differs from run to run; a string of a JSON object (an SSE event's data)
    as its value. With `added`, tools named with that prefix are left out of tool listings (and
    `toolCount`), each counted in `counted`."""
    if isinstance(value, dict):
        out = {k: normalise(v, port, added, counted) for k, v in sorted(value.items()) if k not in _VOLATILE_KEYS}
        tools = out.get("tools")
        if added is not None and isinstance(tools, list):
            kept = [t for t in tools if not (t if isinstance(t, str) else t.get("name", "")).startswith(added)]
            if counted is not None:
                counted.append(len(tools) - len(kept))
            out["tools"] = kept
            if isinstance(out.get("toolCount"), int):
                out["toolCount"] = len(kept)
        return out
    if isinstance(value, list):
        return [normalise(v, port, added, counted) for v in value]
    if isinstance(value, str):
        if value.startswith("{"):
            try:
                return normalise(json.loads(value), port, added, counted)
            except ValueError:
                pass
        value = re.sub(rf"(127\.0\.0\.1|localhost|\[::1\]):{port}\b", r"\1:<port>", value)
        for pattern, repl in _VOLATILE:
            value = pattern.sub(repl, value)
    return value


# ---------------------------------------------------------------------------------------------
# Runs.


def run_server(run: Run, timeout: float) -> Run:
    t0 = time.monotonic()
    shutil.rmtree(run.dir, ignore_errors=True)
    run.dir.mkdir(parents=True)
    port = free_port()
    events = run.dir / "events.jsonl"
    cmd = [*run.server.command, "--port", str(port)]
    if run.mode != "plain":
        cmd += ["--events", str(events)]
    if run.mode.startswith("control-"):
        cmd += ["--mutate", run.mode.removeprefix("control-")]
    if run.server.child:
        cmd += ["--", *run.server.child]
    server_log = run.dir / "server.log"
    with server_log.open("wb") as log:
        # The project's own PATH (Node 20): only the harness gets Node 22.
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, cwd=run.dir)
    try:
        problem = wait_ready(port, proc, 30)
        if problem is not None:
            run.error = f"server {problem}\n{tail(server_log)}"
            return run
        run.rc = suite(
            "server",
            "--url",
            f"http://127.0.0.1:{port}/mcp",
            "--suite",
            "active",
            "-o",
            str(run.dir / "results"),
            "--expected-failures",
            str(HERE / "baselines" / f"{run.server.name}.yml"),
            log=run.dir / "conformance.log",
            timeout=timeout,
        )
    finally:
        # SIGINT: each server closes its sessions and shuts its tracker down (events delivered).
        if proc.poll() is None:
            proc.send_signal(signal.SIGINT)
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            run.error = (run.error or "") + "server did not exit within 15 s of SIGINT (killed; events may be lost)"
    run.checks = read_checks(run.dir / "results")
    added = run.server.added_tools if run.mode == "tracked" else None
    counted: list[int] = []
    run.normalised = {name: normalise(cs, port, added, counted) for name, cs in run.checks.items()}
    run.added = sum(counted)
    # One file, or one per session (the bridge's proxies: events.jsonl.<n>).
    files = sorted(run.dir.glob(f"{events.name}*"))
    if files:
        run.ops = collections.Counter(
            json.loads(line)["type"] for f in files for line in f.read_text().splitlines() if line
        )
    run.seconds = time.monotonic() - t0
    return run


def run_client(c: ClientRun, timeout: float) -> ClientRun:
    t0 = time.monotonic()
    shutil.rmtree(c.dir, ignore_errors=True)
    c.dir.mkdir(parents=True)
    c.rc = suite(
        "client",
        "--command",
        c.command,
        "--scenario",
        c.scenario,
        "--timeout",
        "20000",
        "-o",
        str(c.dir / "results"),
        log=c.dir / "conformance.log",
        timeout=timeout,
    )
    for d in sorted((c.dir / "results").glob("*")):
        checks = json.loads((d / "checks.json").read_text()) if (d / "checks.json").is_file() else []
        c.total += sum(x.get("status") in ("SUCCESS", "FAILURE") for x in checks)
        c.passed += sum(x.get("status") == "SUCCESS" for x in checks)
        lines = (
            [ln for ln in (d / "stdout.txt").read_text().splitlines() if ln.startswith("{")]
            if (d / "stdout.txt").is_file()
            else []
        )
        if lines:
            c.report = json.loads(lines[-1])
    c.seconds = time.monotonic() - t0
    return c


# ---------------------------------------------------------------------------------------------
# Gates and the table.


def first_diff(a: Any, b: Any, names: tuple[str, str]) -> str:
    la = json.dumps(a, indent=1, sort_keys=True).splitlines()
    lb = json.dumps(b, indent=1, sort_keys=True).splitlines()
    diff = list(difflib.unified_diff(la, lb, *names, lineterm="", n=1))
    return "\n".join("      " + line for line in diff[:24])


def check_servers(
    runs: dict[str, Run], servers: list[Server], expected_ops: dict[str, Any], failures: list[str]
) -> list[list[str]]:
    rows: list[list[str]] = []
    for s in servers:
        plain, tracked = runs[f"{s.plain or s.name}-plain"], runs[f"{s.name}-tracked"]
        for r in (plain, tracked) if s.plain is None else (tracked,):
            if r.error:
                failures.append(f"{r.key}: {r.error}")
            if r.rc != 0:
                failures.append(f"{r.key}: the suite exited {r.rc} (see {rel(r.dir / 'conformance.log')})")
            if not r.checks:
                failures.append(f"{r.key}: no checks.json was written")
        if plain.ops:
            failures.append(f"{plain.key}: the untracked server wrote tracking events")
        # Gate 2: identical normalised checks (through the proxy: once its own tools are set aside,
        # and those must be there).
        diff = differing(plain, tracked)
        if s.added_tools is not None and tracked.checks and tracked.added == 0:
            failures.append(f"{s.name}: the proxied run's tool listings have no {s.added_tools}* tool")
        if diff:
            n = diff[0]
            failures.append(
                f"{s.name}: plain and tracked checks.json differ in {len(diff)} scenario(s): "
                + ", ".join(diff)
                + "\n"
                + first_diff(
                    plain.normalised.get(n), tracked.normalised.get(n), (f"{s.name}-plain/{n}", f"{s.name}-tracked/{n}")
                )
            )
        # Gate 3: exact tracked operations per event type.
        want: dict[str, int] = expected_ops.get(s.name, {})
        got = dict(tracked.ops or {})
        ops_ok = bool(want) and got == want
        if not want:
            failures.append(f"{s.name}: expected-ops.json has no counts for this server")
        elif not ops_ok:
            detail = ", ".join(
                f"{t}: {got.get(t, 0)} (expected {want.get(t, 0)})"
                for t in sorted(set(got) | set(want))
                if got.get(t, 0) != want.get(t, 0)
            )
            failures.append(f"{s.name}: tracked operations differ from expected-ops.json: {detail}")
        ident = "n/a" if not plain.checks else ("identical" if not diff else f"DIFFERENT ({len(diff)})")
        if s.added_tools is not None:
            ident += f", {tracked.added} {s.added_tools}* tools aside"
        if s.plain is not None:
            ident = f"{ident} (vs {s.plain} plain)"
        for r in (plain, tracked) if s.plain is None else (tracked,):
            ops = (
                "-"
                if r.mode == "plain"
                else f"{sum(got.values())}/{sum(want.values())} {'ok' if ops_ok else 'MISMATCH'}"
            )
            rows.append(
                [
                    s.label,
                    r.mode,
                    f"{r.count('SUCCESS')}/{r.count('FAILURE')}",
                    str(r.rc),
                    "" if r.mode == "plain" else ident,
                    ops,
                    f"{r.seconds:.1f}",
                ]
            )
    return rows


def differing(a: Run | None, b: Run) -> list[str]:
    """Scenarios whose normalised checks differ between two runs."""
    if a is None:
        return []
    return sorted(n for n in set(a.normalised) | set(b.normalised) if a.normalised.get(n) != b.normalised.get(n))


def check_controls(runs: dict[str, Run], failures: list[str]) -> list[list[str]]:
    """The negative controls: `mime` must make the suite fail; `text` (which the suite cannot see)
    must make the plain-vs-wrapped comparison differ."""
    rows = []
    plain = runs.get("ts-plain")
    for key in ("ts-control-mime", "ts-control-text"):
        control = runs.get(key)
        if control is None:
            continue
        if control.error:
            failures.append(f"{control.key}: {control.error}")
        failed = sorted(
            {
                f"{n}: {c.get('errorMessage')}"
                for n, cs in control.checks.items()
                for c in cs
                if c.get("status") == "FAILURE"
            }
        )
        diff = differing(plain, control)
        if key == "ts-control-mime":
            caught = control.rc not in (0, None) and bool(failed)
            if not caught:
                failures.append(
                    "negative control: the suite PASSED a server whose wrapper drops `mimeType` from resources/read; "
                    "the harness cannot see a mutating wrapper, so a pass proves nothing"
                )
            exit_cell = f"{control.rc} (must fail)"
            what = "drops mimeType from resources/read"
            verdict = f"suite FAILED, as required: {'; '.join(failed[:4])}" if caught else "suite PASSED: gate failure"
        else:
            caught = bool(control.checks) and bool(diff)
            if not caught:
                failures.append(
                    "negative control: a wrapper that changes tools/call text left the normalised checks.json "
                    "identical to the plain run; the plain-vs-tracked gate cannot see a changed response"
                )
            exit_cell = f"{control.rc} (suite blind)" if control.rc == 0 else str(control.rc)
            what = "changes tools/call text"
            verdict = (
                f"checks.json differs from plain in {len(diff)} scenario(s), as required"
                if caught
                else "checks.json IDENTICAL to plain: gate failure"
            )
        print(f"  negative control {key} ({what}): {verdict}")
        rows.append(
            [
                control.server.label,
                control.mode,
                f"{control.count('SUCCESS')}/{control.count('FAILURE')}",
                exit_cell,
                f"differs ({len(diff)})" if diff else "IDENTICAL",
                "-",
                f"{control.seconds:.1f}",
            ]
        )
    return rows


def check_clients(clients: list[ClientRun], failures: list[str]) -> list[list[str]]:
    rows = []
    for c in clients:
        problems = []
        if c.rc != 0:
            problems.append(f"suite exited {c.rc}")
        if c.total == 0 or c.passed != c.total:
            problems.append(f"{c.passed}/{c.total} checks passed")
        report = c.report or {}
        if not report:
            problems.append("the client printed no report")
        for kind in ("resourceTemplates", "resources"):
            got = report.get("discovery", {}).get(kind)
            if report and got != MOCK_DISCOVERY:
                problems.append(f"{kind} discovery gave {got}, expected {MOCK_DISCOVERY}")
        if c.scenario == "tools_call" and report and report.get("toolsCall") != ADD_NUMBERS:
            problems.append(f"add_numbers answered {report.get('toolsCall')!r}")
        if problems:
            failures.append(
                f"client {c.name} {c.scenario}: {'; '.join(problems)} (see {rel(c.dir / 'conformance.log')})"
            )
        discovery = report.get("discovery", {}).get("resourceTemplates", {})
        rows.append(
            [
                f"client {c.name}",
                c.scenario,
                f"{c.passed}/{c.total - c.passed}",
                str(c.rc),
                f"discovery: {discovery.get('support', discovery.get('error'))}, {discovery.get('requests')} req",
                "-",
                f"{c.seconds:.1f}",
            ]
        )
    return rows


def rel(p: Path) -> str:
    try:
        return str(p.relative_to(ROOT))
    except ValueError:
        return str(p)


def table(rows: list[list[str]]) -> str:
    head = ["server", "run", "checks pass/fail", "exit", "plain vs tracked", "ops tracked (got/expected)", "s"]
    widths = [max(len(r[i]) for r in [head, *rows]) for i in range(len(head))]

    def line(r: list[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip()

    return "\n".join([line(head), line(["-" * w for w in widths]), *map(line, rows)])


def version(node: str) -> str:
    return subprocess.run([node, "--version"], capture_output=True, text=True).stdout.strip()


def preflight(servers: list[Server], clients: bool) -> list[str]:
    problems = []
    pkg = SUITE_DIR / "package.json"
    if not pkg.is_file() or not (NODE22_BIN / "node").is_file():
        return [f"the harness is not installed: run `npm ci --prefix {rel(HARNESS)}` (make test-conformance does)"]
    version = json.loads(pkg.read_text()).get("version")
    if version != SUITE_VERSION:
        problems.append(f"conformance {version} is installed; the pin is {SUITE_VERSION} (run npm ci)")
    needs = {exe for s in servers for exe in s.command[:1]}
    if clients:
        needs |= {str(ROOT / ".build/venv-mcp1/bin/python")}
    for exe in sorted(needs):
        if shutil.which(exe) is None:
            problems.append(f"{exe} not found (make build-python / node-install first)")
    return problems


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", type=Path, default=HERE / "out", help="output directory (default tests/conformance/out)")
    p.add_argument("--only", help="comma-separated servers to run (ts, ts-v2, py-v1, py-v2, ts-proxy, ts-proxy-url)")
    p.add_argument("--expected-ops", type=Path, default=HERE / "expected-ops.json")
    p.add_argument("--jobs", type=int, default=2, help="suite runs at a time (default 2)")
    p.add_argument("--timeout", type=float, default=120, help="seconds per suite run")
    p.add_argument("--no-clients", action="store_true", help="skip the client-mode smoke test")
    args = p.parse_args()
    t0 = time.monotonic()

    node = shutil.which("node")  # the project's Node (PATH as given, without the harness' Node 22)
    if node is None:
        print("conformance: `node` is not on PATH", file=sys.stderr)
        return 1
    py1, py2 = str(ROOT / ".build/venv-mcp1/bin/python"), str(ROOT / ".build/venv-mcp2/bin/python")
    all_servers = [
        Server("ts", "ts (sdk 1.x McpServer)", (node, str(HERE / "servers/server.mjs"))),
        Server("ts-v2", "ts-v2 (sdk v2 McpServer)", (node, str(HERE / "servers/server_ts_v2.mjs"))),
        Server("py-v1", "py-v1 (mcp 1.x FastMCP)", (py1, str(HERE / "servers/server_v1.py"))),
        Server("py-v2", "py-v2 (mcp 2.x MCPServer)", (py2, str(HERE / "servers/server_v2.py"))),
        # The suite speaks HTTP, `mcplens proxy` serves stdio: both runs through the same bridge, the
        # plain one to the server over stdio, the tracked one to `mcplens proxy -- <the server>`.
        Server(
            "ts-proxy",
            "ts over stdio, via mcplens proxy",
            (node, str(HERE / "servers/bridge.mjs")),
            (node, str(HERE / "servers/server.mjs"), "--stdio"),
            added_tools="mcplens_",
        ),
        # The same fixtures over Streamable HTTP behind `mcplens proxy --url` (tracked only: its
        # plain counterpart is ts-proxy's — the same bridge, the server over stdio).
        Server(
            "ts-proxy-url",
            "ts over HTTP, via mcplens proxy --url",
            (node, str(HERE / "servers/bridge.mjs"), "--http"),
            (node, str(HERE / "servers/server.mjs")),
            added_tools="mcplens_",
            plain="ts-proxy",
        ),
    ]
    only = set(args.only.split(",")) if args.only else None
    servers = [s for s in all_servers if only is None or s.name in only]
    problems = preflight(servers, not args.no_clients)
    if problems:
        print("conformance: cannot run:\n  " + "\n  ".join(problems), file=sys.stderr)
        return 1
    expected_ops = json.loads(args.expected_ops.read_text())
    out: Path = args.out.resolve()
    print(
        f"conformance {SUITE_VERSION} on Node {version(str(NODE22_BIN / 'node'))}; servers and clients on Node "
        f"{version(node)} and .build/venv-mcp1, venv-mcp2; out: {rel(out)}"
    )

    runs = {
        f"{s.name}-{m}": Run(s, m, out / f"{s.name}-{m}")
        for s in servers
        for m in ("plain", "tracked")
        if m == "tracked" or s.plain is None
    }
    for s in servers:  # a counterpart's plain run is run even when only this server was asked for
        if s.plain is not None and f"{s.plain}-plain" not in runs:
            counterpart = next(c for c in all_servers if c.name == s.plain)
            runs[f"{s.plain}-plain"] = Run(counterpart, "plain", out / f"{s.plain}-plain")
    ts = next((s for s in servers if s.name == "ts"), None)
    if ts is not None:
        for m in ("control-mime", "control-text"):
            runs[f"ts-{m}"] = Run(ts, m, out / f"ts-{m}")
    client_runs: list[ClientRun] = []
    if not args.no_clients:
        commands = {
            "node": f"{node} {HERE / 'clients/client.mjs'}",
            "py-v1": f"{py1} {HERE / 'clients/client_v1.py'}",
        }
        client_runs = [
            ClientRun(n, cmd, sc, out / f"client-{n}-{sc}") for n, cmd in commands.items() for sc in SCENARIOS
        ]

    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        futures: list[concurrent.futures.Future[Any]] = [
            pool.submit(run_server, r, args.timeout) for r in runs.values()
        ]
        futures += [pool.submit(run_client, c, args.timeout) for c in client_runs]
        for future in futures:
            future.result()

    failures: list[str] = []
    print()
    rows = check_servers(runs, servers, expected_ops, failures)
    rows += check_controls(runs, failures)
    rows += check_clients(client_runs, failures)
    print()
    print(table(rows))
    print(f"\nwall time {time.monotonic() - t0:.1f} s")
    if failures:
        print("\nconformance: FAILED", file=sys.stderr)
        for f in failures:
            print(f"  - {f}", file=sys.stderr)
        return 1
    print("conformance: all gates passed (exit codes, plain = tracked, tracked ops, negative controls, client mode)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
