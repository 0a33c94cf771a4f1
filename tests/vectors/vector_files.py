"""Writes a generator's cases as tests/vectors/<dir>/<name>.json (shared by gen_templates.py and
gen_catalog_tools.py)."""

from __future__ import annotations

import json
import pathlib
import shutil


def write_all(out: pathlib.Path, cases: list[dict], what: str) -> None:
    """Replaces `out` with one file per case; names must be unique."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    names = set()
    for c in cases:
        assert c["name"] not in names, c["name"]
        names.add(c["name"])
        (out / f"{c['name']}.json").write_text(json.dumps(c, indent=1, ensure_ascii=False) + "\n")
    print(f"{len(cases)} {what} vectors written to {out}")
