#!/usr/bin/env python3
"""Writes the committed seed corpus (core/fuzz/seeds/<target>/): a few hand-picked inputs per
target plus deterministic pseudo-random bytes for the structured targets. Re-running it gives the
same files. `make fuzz` grows a working corpus from these in core/fuzz/corpus/ (not committed)."""

import json
import random
from pathlib import Path

ROOT = Path(__file__).parent / "seeds"


def write(target: str, name: str, data: bytes | str) -> None:
    d = ROOT / target
    d.mkdir(parents=True, exist_ok=True)
    (d / name).write_bytes(data.encode("utf-8", "surrogatepass") if isinstance(data, str) else data)


def nested(depth: int) -> str:
    return '{"a":' * depth + "1" + "}" * depth


PAGES = {
    "templates": {
        "resourceTemplates": [
            {"uriTemplate": "file:///{path}", "name": "files", "title": "Files", "mimeType": "text/plain"},
            {
                "uriTemplate": "db://{table}/{id}",
                "name": "rows",
                "description": "A row",
                "annotations": {"audience": ["assistant"], "priority": 0.5, "lastModified": "2025-01-02T03:04:05Z"},
            },
        ],
        "nextCursor": "p2",
    },
    "resources": {"resources": [{"uri": "file:///README.md", "name": "readme", "size": 12}], "ttlMs": 5000},
    "sloppy": {
        "resourceTemplates": [
            {
                "uriTemplate": "file:///{path}",
                "name": "files\u202e\U000e0041",
                "title": 5,
                "description": "line one\nline two\x1b[31m",
                "mimeType": ["text/plain"],
                "annotations": {"priority": 2, "audience": ["system"], "lastModified": "2024-05-01"},
                "_meta": {"secret": "x"},
                "icons": [{"src": "https://example.invalid/i.png"}],
                "xExtra": 1,
            }
        ],
        "resultType": "complete",
        "cacheScope": "session",
    },
    "bad_template": {"resourceTemplates": [{"uriTemplate": "a b{", "name": "x"}, {"uriTemplate": "{=x}", "name": "y"}]},
    "not_array": {"resourceTemplates": "nope", "resources": {}},
    "cursor_int": {"resourceTemplates": [], "resources": [], "nextCursor": 5},
    "empty_cursor": {"resourceTemplates": [], "resources": [], "nextCursor": ""},
    "incomplete": {"resourceTemplates": [], "resultType": "incomplete"},
    "long_description": {"resources": [{"uri": "x://1", "name": "n", "description": "\u202ed" * 1500}]},
}

for name, page in PAGES.items():
    write("page", name + ".json", json.dumps(page))
write(
    "page",
    "lone_surrogates.json",
    r'{"resourceTemplates":[{"uriTemplate":"t://{x}","name":"a\ud800b"}],"nextCursor":"c\udc00"}',
)
write("page", "duplicate_key.json", '{"resources":[{"uri":"x://1","name":"a","name":"b"}]}')
DEEP = nested(1000)
write(
    "page",
    "deep_meta.json",
    f'{{"resourceTemplates":[{{"uriTemplate":"m://{{id}}","name":"m","_meta":{DEEP}}}],"_meta":{DEEP}}}',
)
write("page", "invalid_utf8.bin", b'{"resources":[{"uri":"x://1","name":"a\xff\xfeb"}]}')
for name, text in {
    "null": "null",
    "array": "[]",
    "object": "{}",
    "garbage": '{"resources":[',
    "trailing": '{"resources":[]} x',
}.items():
    write("page", name + ".json", text)

SANITIZE = {
    "csi": "x\x1b[31;1mred\x1b[0m",
    "osc": "x\x1b]8;;http://e\x07link\x1b]8;;\x1b\\",
    "c1": "\x9b2Jclear\x90dcs\x9c",
    "bidi": "a\u202eb\u2066c\u200bd\ufeff",
    "tags": "flag\U000e0041\U000e007f\U000e0100",
    "nonchars": "a\ufdd0b\uffffc\U0001fffe",
    "controls": "a\n\r\tb\x00c\x85d",
    "long": "é" * 2100,
    "long_escape": "a" * 2046 + "\x1b[1m" + "b" * 10,
    "ellipsis": "…" * 2049,
}
for name, text in SANITIZE.items():
    write("sanitize", name + ".txt", text)
write("sanitize", "invalid_utf8.bin", b"a\xc3\x28b\xe2\x80\xae\xff")

TEMPLATES = [
    "file:///{path}",
    "http://e.com/{+path}/here{?q,lang}{&x*}{#frag:3}",
    "{/list*}{;keys}{.dom}",
    "x/{var.sub}/{a%20b}",
    "%41{x:9999}",
    "{=x}",
    "{x:0}",
    "{x:10000}",
    "{x,}",
    "{.x.}",
    "%4",
    "a b",
    "a\u200eb",
    "<x>",
    "{x y}",
    "a\ufffd",
    "ü/{x}",
    "\ue000{x}",
    "{x",
    "}",
]
for i, t in enumerate(TEMPLATES):
    write("uri_template", f"t{i:02}.txt", t)
write("uri_template", "long.txt", "a" * 2047 + "{x}")

# template: "TEMPLATE\nURI" texts (the structured half of the target reads the same bytes).
TEMPLATE_URIS = [
    ("file:///{+path}", "file:///a/b%20c"),
    ("db://{table}/{id}{?fields*}", "db://users/42?fields=a&fields=b"),
    ("{/list*,x:2}{;keys*}{.dom}", "/a/b/cd;k=v;j.x"),
    ("'{var}'{#frag}", "'value'#a/b"),
    ("caf\u00e9/{x}{&y}", "caf%C3%A9/1&y="),
    ("{+a}{+b}{+c}~", "abc~~~"),
    ("{x}/{x:1}", "ab/a"),
    ("{?id,keys*}", "?id=7&a=1&b=%2C"),
]
for i, (t, u) in enumerate(TEMPLATE_URIS):
    write("template", f"m{i:02}.txt", f"{t}\n{u}")
for i, t in enumerate(TEMPLATES):
    write("template", f"t{i:02}.txt", t)

rng = random.Random(6570)
for target in ("pager_sequence", "tracking_event", "template", "proxy_sequence"):
    for i, size in enumerate((8, 32, 64, 128, 256, 512, 1024, 2048)):
        write(target, f"random{i}.bin", bytes(rng.randrange(256) for _ in range(size)))

# complete_answer: `completion/complete` answers, well-formed and hostile.
COMPLETIONS = {
    "values": {"completion": {"values": ["intro", "install"], "total": 2, "hasMore": False}},
    "many": {"completion": {"values": [f"v{i}" for i in range(150)], "total": 150, "hasMore": True}},
    "types": {"completion": {"values": [1, None, {"a": 1}, ["x"], True, "fine"], "total": "lots", "hasMore": "yes"}},
    "unsafe": {"completion": {"values": ["\x1b[31mred", "a\u202eb", "z\u200bw", "t\U000e0041", "two\nlines", "ok"]}},
    "long": {"completion": {"values": ["y" * 1024, "x" * 1025, "w" * 500]}},
    "negative": {"completion": {"values": ["a"], "total": -1, "hasMore": 1}},
    "empty": {"completion": {"values": []}},
}
for name, answer in COMPLETIONS.items():
    write("complete_answer", name + ".json", json.dumps(answer))
write("complete_answer", "not_an_object.json", "[1,2]")
write("complete_answer", "no_values.json", '{"completion":{"total":3}}')
write("complete_answer", "surrogate.json", '{"completion":{"values":["a\\ud800b","ok"]}}')
write("complete_answer", "truncated.json", '{"completion":{"values":["a",')
