#!/usr/bin/env python3
"""Writes tests/vectors/host/*.json (format: tests/vectors/README.md, "host").

The host contract: what a binding would otherwise decide on its own, pinned once and replayed
through each language's public API with real SDK objects (Python: `mcp.ClientSession`; Node: the
TypeScript SDK's `Client`, 1.x and v2). Codes, servers and messages are written by hand from
DESIGN.md and docs/errors.md; every message is the core's.

Run: python3 tests/vectors/gen_host.py
"""

from __future__ import annotations

import json
import pathlib
import shutil

OUT = pathlib.Path(__file__).parent / "host"
CASES: list[dict] = []

NOT_INITIALIZED = (
    'server "docs": invalid argument: the client is not initialized (no initialize result, nor a '
    "server/discover result on a sessionless 2026-07-28 connection)"
)
ALREADY_DRIVEN = "invalid argument: this catalog already has its refresher (one refresher drives a catalog)"


def case(name: str, description: str, call: dict, expect_error: dict, **extra) -> None:
    CASES.append({"name": name, "description": description, "call": call, "expectError": expect_error, **extra})


def not_initialized(call: str) -> None:
    case(
        f"{call}_on_an_uninitialized_client",
        f"{call} over a client that has no initialize (or server/discover) result is the caller's "
        "mistake: an error in every language, never an empty listing; nothing is registered",
        {"op": call, "server": "docs", "client": "uninitialized"},
        {"code": "invalid_argument", "server": "docs", "message": NOT_INITIALIZED},
        expectServers=[] if call.startswith("catalog") else None,
    )


for call in ("list_resource_templates", "list_resources", "catalog_refresh", "catalog_watch"):
    not_initialized(call)
case(
    "tool_input_that_is_not_json_names_no_server",
    "the listing tool's input is not JSON: invalid_argument with no server (None / undefined, never '')",
    {"op": "tool", "input": "not json"},
    {"code": "invalid_argument", "server": None, "message": "invalid input: the input is not a JSON object"},
)
case(
    "a_second_refresher_of_a_catalog_names_no_server",
    "a catalog has one refresh machine: a second Refresher of a driven catalog is refused, with no server",
    {"op": "second_refresher"},
    {"code": "invalid_argument", "server": None, "message": ALREADY_DRIVEN},
)



def refused_name(op: str, argument: str, value: str, names: list[str], server: str | None, **call) -> None:
    """A core enum the caller names by text (a reason, a want, a kind): a name it does not have is
    refused with the one message that lists every name (never the caller's text)."""
    quoted = [f'"{n}"' for n in names]
    listed = f"{', '.join(quoted[:-1])} or {quoted[-1]}"
    prefix = f'server "{server}": ' if server else ""
    case(
        f"{op}_with_an_unknown_{argument}",
        f"{op}: a {argument} the core does not name is the caller's mistake, refused with the core's "
        "message listing every name, the same in every language",
        {"op": op, "server": server, argument: value, **call},
        {"code": "invalid_argument", "server": server, "message": f"{prefix}invalid argument: `{argument}` must be {listed}"},
    )


refused_name(
    "catalog_invalidate",
    "reason",
    "expired\u202e",
    ["list_changed", "connection_closed", "configuration_changed", "disabled", "other"],
    "docs",
)
refused_name("refresher_request", "want", "stale", ["current", "refresh", "force"], "docs")
refused_name("pager", "kind", "tools", ["resources", "resource_templates"], "docs")

RL_FAILED = 'server "docs": resources/list failed'


def sdk_failure(name: str, description: str, kind: str, code, held, expect: dict) -> None:
    """What an SDK reported instead of a result, as the facts a binding reads off it, fed to a
    pager's first page (`accept_failure` / `acceptFailure`): the core classifies, the same in every
    language (decision 5 of the driver contract; each binding kept its own table before)."""
    case(f"sdk_failure_{name}", description,
         {"op": "sdk_failure", "server": "docs", "kind": kind, "code": code, "connectionHeld": held}, expect)


TRANSPORT = {"code": "transport_error", "server": "docs", "message": f"{RL_FAILED}: the transport failed"}
MALFORMED = {"code": "malformed_result", "server": "docs",
             "message": 'server "docs": resources/list returned a malformed result (the host\'s client refused the result)'}
sdk_failure("closed_code_when_the_host_cannot_tell", "the SDKs' own connection-closed code (-32000), on a "
            "connection the host cannot see (Python's sessions): the transport's", "sdk_error", -32000, None, TRANSPORT)
sdk_failure("closed_code_on_a_held_connection", "-32000 while the SDK still holds its connection (Node: a transport "
            "is set): the server's own error", "sdk_error", -32000, True,
            {"code": "server_error", "server": "docs", "message": f"{RL_FAILED} with JSON-RPC error -32000"})
sdk_failure("error_on_a_dropped_connection", "an SDK error once the SDK holds no connection: the transport's, "
            "whatever its code", "sdk_error", -32603, False, TRANSPORT)
sdk_failure("error_answer_with_a_fractional_code", "an error answer whose code is not an integer: malformed",
            "error_answer", 1.5, None, MALFORMED)
sdk_failure("error_answer_without_a_code", "an error answer with no numeric code: malformed", "error_answer", None,
            None, MALFORMED)
sdk_failure("schema_refused", "the SDK's schema refused the result: malformed", "schema_refused", None, None, MALFORMED)
sdk_failure("anything_else", "anything else the SDK threw (a closed stream, an OS error): the transport's", "lost",
            None, None, TRANSPORT)
case("sdk_failure_of_an_unknown_kind", "a kind of failure the core does not name is the caller's mistake",
     {"op": "sdk_failure", "server": "docs", "kind": "timeout", "code": None, "connectionHeld": None},
     {"code": "invalid_argument", "server": "docs", "message": 'server "docs": invalid argument: `kind` must be '
      '"error_answer", "sdk_error", "schema_refused" or "lost"'})


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    for c in CASES:
        c = {k: v for k, v in c.items() if v is not None}
        (OUT / f"{c['name']}.json").write_text(json.dumps(c, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(CASES)} host vectors written to {OUT}")


if __name__ == "__main__":
    main()
