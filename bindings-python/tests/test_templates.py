"""RFC 6570 templates from Python: the external uritemplate-test suite (`tests/uritemplate-test/`,
unmodified) and the shared template vectors (`tests/vectors/templates/`), as Rust runs them
(`core/tests/rules/templates.rs`)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import mcplens

ROOT = Path(__file__).resolve().parents[2] / "tests"
SUITE = ROOT / "uritemplate-test"
VECTORS = sorted((ROOT / "vectors" / "templates").glob("*.json"))


def suite_cases(file: str) -> list[tuple[str, dict[str, Any], str, Any]]:
    doc = json.loads((SUITE / file).read_text(encoding="utf-8"))
    return [(group, body["variables"], t, want) for group, body in doc.items() for t, want in body["testcases"]]


def run_suite(file: str) -> tuple[int, int, list[str]]:
    cases = suite_cases(file)
    bad = []
    for group, values, t, want in cases:
        try:
            got: str | None = mcplens.expand(t, values)
        except mcplens.TemplateError:
            got = None
        accepted = [want] if isinstance(want, str) else want if isinstance(want, list) else []
        ok = got is None if want is False else got in accepted
        if not ok:
            bad.append(f"{file} / {group}: {t!r} gave {got!r}, want {want!r}")
    return len(cases) - len(bad), len(cases), bad


@pytest.mark.parametrize(
    ("file", "at_least"), [("spec-examples.json", 60), ("extended-tests.json", 50), ("negative-tests.json", 30)]
)
def test_uritemplate_suite(file: str, at_least: int, capsys: pytest.CaptureFixture[str]) -> None:
    passed, total, bad = run_suite(file)
    with capsys.disabled():
        print(f"\n{file}: {passed}/{total} cases passed")
    assert total >= at_least
    assert bad == []


def test_uritemplate_suite_matches_back() -> None:
    bad = []
    for file in ("spec-examples.json", "extended-tests.json"):
        for group, _, t, want in suite_cases(file):
            for uri in [want] if isinstance(want, str) else want:
                found = mcplens.matches(t, uri)
                if found is None or mcplens.expand(t, found) != uri:
                    bad.append(f"{group}: {t!r} on {uri!r} gave {found!r}")
    assert bad == []


def compact(v: Any) -> str:
    return json.dumps(v, separators=(",", ":"), ensure_ascii=False)


def run_vector_case(case: dict[str, Any]) -> str | None:
    op, t = case["op"], case["template"]
    try:
        if op == "variables":
            got: Any = mcplens.variables(t)
        elif op == "expand":
            got = mcplens.expand(t, case["values"])
        elif op == "matches":
            got = mcplens.matches(t, case["uri"])
        else:
            return f"unknown op {op}"
    except mcplens.TemplateError as e:
        if case.get("expectError") != e.code:
            return f"{op} {t!r}: error {e.code} ({e}), want {case.get('expectError')}"
        if "expectMessage" in case and str(e) != case["expectMessage"]:
            return f"{op} {t!r}: message {str(e)!r}, want {case['expectMessage']!r}"
        if not isinstance(e, mcplens.McplensError) or e.server is not None:
            return f"{op} {t!r}: {e!r} is not a McplensError without a server"
        return None
    if "expectError" in case:
        return f"{op} {t!r}: got {got!r}, want error {case['expectError']}"
    # Compared as compact JSON text: the order of an associative array counts.
    if compact(got) != compact(case["expect"]):
        return f"{op} {t!r}: got {compact(got)}, want {compact(case['expect'])}"
    return None


def test_vectors_present() -> None:
    assert len(VECTORS) >= 10


@pytest.mark.parametrize("path", VECTORS, ids=[p.stem for p in VECTORS])
def test_template_vector(path: Path) -> None:
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["name"] == path.stem
    assert [p for p in map(run_vector_case, doc["cases"]) if p is not None] == []


def test_python_values() -> None:
    # A float with no fraction keeps ".0", as Python's json writes it; tuples are lists; dict order counts.
    assert mcplens.expand("{x}", {"x": 6.0}) == "6.0"
    assert mcplens.expand("{/t*}", {"t": ("a", 1)}) == "/a/1"
    assert mcplens.expand("{?k*}", {"k": {"b": "1", "a": "2"}}) == "?b=1&a=2"
    for bad in ({"x": float("nan")}, {"x": object()}, {1: "x"}, "x"):
        with pytest.raises(mcplens.TemplateError) as info:
            mcplens.expand("{x}", bad)  # type: ignore[arg-type]
        assert info.value.code == "invalid_value"


def test_resources_tool_spec_is_the_cores() -> None:
    spec = mcplens.LIST_RESOURCES_TOOL
    assert spec.name == "ListMcpResourcesTool"
    assert spec.deferred
    assert spec.annotations["readOnlyHint"] is True
    for tool in (spec, mcplens.LIST_RESOURCE_TEMPLATES_TOOL):
        assert "An empty listing means the connected servers offer no" in tool.description
        assert "not that a server has no tools" in tool.description
    assert spec.input_schema["properties"].keys() == {"server", "offset", "limit"}
