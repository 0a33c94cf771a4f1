"""The shapes of the URI-template results (`docs/templates.md`); the functions are `mcplens._core`'s."""

from __future__ import annotations

from typing import Literal, TypeAlias, TypedDict

TemplateValue: TypeAlias = str | list[str] | dict[str, str]
"""A value as `matches` returns it: a string, a list or an associative array (in order)."""


class TemplateVariable(TypedDict):
    """One variable of a template, as `variables` lists it."""

    name: str
    operator: Literal["", "+", "#", ".", "/", ";", "?", "&"]
    explode: bool
    prefix: int | None


class TemplateMatch(TypedDict):
    """One cached template a URI fits: route the read to `server`."""

    server: str
    uri_template: str
    name: str
    values: dict[str, TemplateValue]


class CatalogMatches(TypedDict):
    """What `Catalog.match_uri` found: matches most specific first; `skipped` templates gave up."""

    matches: list[TemplateMatch]
    skipped: int
