#!/usr/bin/env python3
"""Writes tests/vectors/tracking-config/*.json: tracker options in → exporter names, the session id
a transport session id derives, resolved defaults, or the error (code and option).

Expectations are written by hand from docs/tracking.md; session ids are computed here,
independently of mcplens: `ses_` + base62 (KSUID alphabet, 27 characters) of the first 20 bytes
of sha256(transport id + ":" + project id).

`options` use the TrackerConfig JSON names; each runner builds its own public tracker from them
(Python: `Tracker(exporters=[JsonlExporter(...)], queue_capacity=...)`, Node: `new Tracker({...})`).

Run: python3 tests/vectors/gen_tracking_config.py   (rewrites the directory)
"""
from __future__ import annotations

import hashlib
import json
import pathlib
import shutil

OUT = pathlib.Path(__file__).parent / "tracking-config"
B62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
CASES: list[dict] = []
DEAD = "http://127.0.0.1:9"


def session_id(transport_id: str, project: str | None) -> str:
    digest = hashlib.sha256(f"{transport_id}:{project or ''}".encode()).digest()[:20]
    n = int.from_bytes(digest, "big")
    chars = []
    for _ in range(27):
        n, r = divmod(n, 62)
        chars.append(B62[r])
    return "ses_" + "".join(reversed(chars))


def ok(name, description, options, exporters, *, transport_id=None, project=None, config=None):
    c = {"name": name, "description": description, "options": options, "expect": {"exporters": exporters}}
    if transport_id is not None:
        c["transportSessionId"] = transport_id
        c["expect"]["sessionId"] = session_id(transport_id, project)
    if config is not None:
        c["expect"]["config"] = config
    CASES.append(c)


def err(name, description, options, option):
    CASES.append({"name": name, "description": description, "options": options,
                  "expectError": {"code": "invalid_argument", "option": option}})


ok("defaults", "no options: one JSONL exporter and the documented defaults", {}, ["jsonl"],
   config={"enableTracing": True, "captureParameters": True, "captureResponses": True, "captureResourceText": False,
           "queueCapacity": 10000, "queueBytes": 67108864, "identifyMaxRecords": 1000, "identifyTimeoutMs": 5000,
           "hookTimeoutMs": 5000, "callbackTimeoutMs": 30000,
           "export": {"maxEvents": 512, "maxDelayMs": 1000, "maxIdleMs": 20, "maxQueued": 10000, "initialBackoffMs": 200,
                      "maxBackoffMs": 30000, "maxAttempts": 8},
           "limits": {"maxStringBytes": 32768, "maxDepth": 10, "maxBreadth": 100, "maxEventBytes": 102400}})
ok("two_jsonl_exporters", "a second JSONL exporter is jsonl-2", {"exporters": [
    {"type": "jsonl", "path": "a.jsonl"}, {"type": "jsonl", "path": "b.jsonl"}]}, ["jsonl", "jsonl-2"])
ok("three_callbacks", "callbacks are callback, callback-2, callback-3", {"exporters": [
    {"type": "callback"}, {"type": "callback"}, {"type": "callback"}]}, ["callback", "callback-2", "callback-3"])
ok("otlp_is_two_exporters", "an OTLP exporter is otlp (spans) and otlp-metrics", {"exporters": [
    {"type": "otlp", "endpoint": DEAD}, {"type": "callback"}]}, ["otlp", "otlp-metrics", "callback"])
ok("two_otlp_exporters", "a second OTLP exporter is otlp-2 and otlp-2-metrics", {"exporters": [
    {"type": "otlp", "endpoint": DEAD}, {"type": "otlp", "endpoint": DEAD, "headers": [["x-api-key", "k"]]}]},
   ["otlp", "otlp-metrics", "otlp-2", "otlp-2-metrics"])
ok("mixed_exporters", "names are per type, in configuration order", {"exporters": [
    {"type": "mcpcat", "projectId": "proj_1", "baseUrl": DEAD}, {"type": "jsonl", "path": "a.jsonl"},
    {"type": "mcpcat", "projectId": "proj_2", "baseUrl": DEAD}]}, ["mcpcat", "jsonl", "mcpcat-2"],
   transport_id="sess-1", project="proj_1")
ok("agentcat_default_base_url", "the agentcat exporter's default base URL is agentcat 2.1.0's",
   {"exporters": [{"type": "mcpcat", "projectId": "proj_x"}]}, ["mcpcat"],
   config={"exporters": [{"type": "mcpcat", "baseUrl": "https://api.agentcat.com", "projectId": "proj_x", "timeoutMs": 10000}]})
ok("session_id_without_project", "no project: sha256(id + \":\")", {}, ["jsonl"], transport_id="7f3c2a90-4b1e-4d8a-9c55-0e6b1d2f8a31")
ok("session_id_salted_by_the_agentcat_project", "the first agentcat exporter's project salts session ids",
   {"exporters": [{"type": "mcpcat", "projectId": "proj_abc", "apiKey": "key-1", "baseUrl": DEAD}]}, ["mcpcat"],
   transport_id="7f3c2a90-4b1e-4d8a-9c55-0e6b1d2f8a31", project="proj_abc")
ok("session_id_disabled_tracker", "a disabled tracker derives the same ids",
   {"enableTracing": False, "exporters": [{"type": "mcpcat", "projectId": "proj_abc", "baseUrl": DEAD}]}, ["mcpcat"],
   transport_id="abc", project="proj_abc")
ok("capture_options", "capture options are kept as given", {"captureParameters": False, "captureResponses": False,
   "captureResourceText": True}, ["jsonl"],
   config={"captureParameters": False, "captureResponses": False, "captureResourceText": True})
ok("identify_bounds", "identify bounds are configurable", {"identifyMaxRecords": 10, "identifyTimeoutMs": 250}, ["jsonl"],
   config={"identifyMaxRecords": 10, "identifyTimeoutMs": 250})
ok("hook_timeouts", "the redact hook's and a callback exporter's timeouts are configurable",
   {"hookTimeoutMs": 250, "callbackTimeoutMs": 1500}, ["jsonl"], config={"hookTimeoutMs": 250, "callbackTimeoutMs": 1500})
ok("queue_capacity", "the request-path queue bound", {"queueCapacity": 5}, ["jsonl"], config={"queueCapacity": 5, "queueBytes": 67108864})
err("queue_capacity_zero", "a queue of 0 operations", {"queueCapacity": 0}, "queueCapacity")
err("queue_capacity_negative", "a negative queue bound", {"queueCapacity": -1}, "queueCapacity")
err("queue_capacity_not_a_number", "a queue bound that is not a number", {"queueCapacity": "many"}, "queueCapacity")
err("checked_when_disabled", "options are checked even with tracing off", {"enableTracing": False, "queueCapacity": 0}, "queueCapacity")
err("hook_timeout_zero", "a redact hook needs at least 1 ms", {"hookTimeoutMs": 0}, "hookTimeoutMs")
err("callback_timeout_zero", "a callback exporter needs at least 1 ms", {"callbackTimeoutMs": 0}, "callbackTimeoutMs")
err("identify_max_records_zero", "identify must hold at least one record", {"identifyMaxRecords": 0}, "identifyMaxRecords")
err("otlp_endpoint_not_a_url", "an OTLP endpoint must be an http(s) URL", {"exporters": [{"type": "otlp", "endpoint": "not a url"}]},
    "exporters[0].endpoint")
err("agentcat_empty_project", "an agentcat exporter needs a project", {"exporters": [
    {"type": "jsonl", "path": "a.jsonl"}, {"type": "mcpcat", "projectId": "", "baseUrl": DEAD}]}, "exporters[1].projectId")
err("agentcat_bad_base_url", "an agentcat base URL must be an http(s) URL", {"exporters": [
    {"type": "mcpcat", "projectId": "p", "baseUrl": "ftp://x"}]}, "exporters[0].baseUrl")
err("jsonl_empty_path", "a JSONL path must not be empty", {"exporters": [{"type": "jsonl", "path": ""}]}, "exporters[0].path")


def main() -> None:
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir()
    for c in CASES:
        (OUT / f"{c['name']}.json").write_text(json.dumps(c, indent=1) + "\n", encoding="utf-8")
    print(f"{len(CASES)} cases in {OUT}")


if __name__ == "__main__":
    main()
