#!/usr/bin/env python3
"""Writes tests/vectors/templates/*.json (format: tests/vectors/README.md, "templates").

Expected expansions, matches and errors are written by hand from RFC 6570 and docs/templates.md,
independently of mcplens. The external RFC 6570 suite (tests/uritemplate-test/) is run beside these.

Run: python3 tests/vectors/gen_templates.py
"""
from __future__ import annotations

import pathlib

from vector_files import write_all

OUT = pathlib.Path(__file__).parent / "templates"
CASES: list[dict] = []


def case(name: str, description: str, cases: list[dict]) -> None:
    CASES.append({"name": name, "description": description, "cases": cases})


def var(name, operator="", explode=False, prefix=None):
    return {"name": name, "operator": operator, "explode": explode, "prefix": prefix}


def ex(template, values, expect=None, error=None, message=None):
    c = {"op": "expand", "template": template, "values": values}
    if error is None:
        c["expect"] = expect
    else:
        c["expectError"] = error
        if message is not None:
            c["expectMessage"] = message
    return c


def m(template, uri, expect=None, error=None):
    c = {"op": "matches", "template": template, "uri": uri}
    if error is None:
        c["expect"] = expect
    else:
        c["expectError"] = error
    return c


def v(template, expect=None, error=None, message=None):
    c = {"op": "variables", "template": template}
    if error is None:
        c["expect"] = expect
    else:
        c["expectError"] = error
        if message is not None:
            c["expectMessage"] = message
    return c


case("variables_every_operator", "variables lists each varspec in order: name, operator, explode, prefix", [
    v("{a}{+b}{#c}{.d}{/e}{;f}{?g}{&h}", [var("a"), var("b", "+"), var("c", "#"), var("d", "."), var("e", "/"),
                                          var("f", ";"), var("g", "?"), var("h", "&")]),
    v("x://{+path:6}/{list*,y}", [var("path", "+", prefix=6), var("list", explode=True), var("y")]),
    v("{x}/{x:2}{?x}", [var("x"), var("x", prefix=2), var("x", "?")]),
    v("{last.name}{Some%20Thing}{_1:9999}", [var("last.name"), var("Some%20Thing"), var("_1", prefix=9999)]),
    v("no/variables", []),
    v("", []),
])
case("variables_invalid_template", "an invalid template is invalid_uri_template, naming the character, never the text", [
    v("x://{a", error="invalid_uri_template", message="invalid URI template: not RFC 6570 syntax at character 7"),
    v("{=x}", error="invalid_uri_template", message="invalid URI template: not RFC 6570 syntax at character 2"),
    v("a b/{x}", error="invalid_uri_template",
      message="invalid URI template: a control, whitespace or invisible character at character 2"),
    v("x://{a\u200eb}", error="invalid_uri_template"),
    v("x://" + "a" * 2045, error="invalid_uri_template",
      message="invalid URI template: over 2048 characters at character 2049"),
    v('x://"{a}"', error="invalid_uri_template"),
    v("{x:0}", error="invalid_uri_template"),
])
case("quote_is_a_literal", "' is a literal, copied as is (the RFC's grammar leaves it out; its examples use it)", [
    v("'{var}'", [var("var")]),
    ex("'{var}'", {"var": "value"}, "'value'"),
    ex("x://{a}/it's", {"a": "b"}, "x://b/it's"),
    m("'{var}'", "'value'", {"var": "value"}),
    m("x://{a}/it's", "x://q/it%27s", None),
])
case("values_numbers_and_null", "numbers are written as JSON writes them; null and missing names are undefined", [
    ex("{?n,f,neg,big}", {"n": 6, "f": 37.76, "neg": -122.427, "big": 1e21}, "?n=6&f=37.76&neg=-122.427&big=1e%2B21"),
    ex("{?a,b,c}", {"a": None, "b": "x"}, "?b=x"),
    ex("{/list*}", {"list": [1, None, "two"]}, "/1/two"),
    ex("{?keys*}", {"keys": {"a": 1, "b": None, "c": "3"}}, "?a=1&c=3"),
    ex("{x}{?y}", {"x": [], "y": {}}, ""),
    ex("{?keys*}", {"keys": {"a": None}}, ""),
    ex("{x}", {"x": ""}, ""),
    ex("{?x}", {"x": ""}, "?x="),
    ex("{;x}", {"x": ""}, ";x"),
])
case("values_wrong_type", "booleans, nested composites and values that are not an object are invalid_value", [
    ex("{x}", {"x": True}, error="invalid_value",
       message='invalid value for "x": a value must be a string, a number, a list or an object, not a boolean'),
    ex("{x}", {"x": [1, [2]]}, error="invalid_value",
       message='invalid value for "x": list members and object values must be strings or numbers, not lists or objects'),
    ex("{x}", {"x": {"k": {"n": 1}}}, error="invalid_value"),
    ex("{x}", {"x": [True]}, error="invalid_value"),
    ex("{x}", ["x"], error="invalid_value", message="invalid value: the values must be an object"),
    ex("{x}", "x", error="invalid_value"),
    ex("{x}", {"unused": False}, error="invalid_value"),
])
case("prefix_on_composite", "a prefix modifier on a list or associative array is prefix_on_composite", [
    ex("{list:1}", {"list": ["a", "b"]}, error="prefix_on_composite",
       message='the prefix modifier of "list" applies to strings only, and its value is a list or an associative array'),
    ex("{+keys:2}", {"keys": {"a": "b"}}, error="prefix_on_composite"),
    ex("{list:1}", {"list": []}, ""),
    ex("{x:2}", {"x": 12345}, "12"),
])
case("output_cap", "an expansion over 8,192 bytes is output_too_large; exactly 8,192 is fine", [
    ex("{x}", {"x": "a" * 8192}, "a" * 8192),
    ex("{x}", {"x": "a" * 8193}, error="output_too_large", message="the expanded URI would be over the 8192-byte limit"),
    ex("{x}", {"x": " " * 2731}, error="output_too_large"),
    ex("{x}", {"x": " " * 2730}, "%20" * 2730),
    ex("{?list*}", {"list": ["1"] * 1170}, "?" + "&".join(["list=1"] * 1170)),
    ex("{?list*}", {"list": ["1"] * 1171}, error="output_too_large"),
])
case("expand_encoding", "pct-encoding: unreserved as is; + and # keep reserved characters and triplets; literals", [
    ex("{x}", {"x": "a/b c%2F~é"}, "a%2Fb%20c%252F~%C3%A9"),
    ex("{+x}", {"x": "a/b c%2F%zz"}, "a/b%20c%2F%25zz"),
    ex("{#x}", {"x": "a/b"}, "#a/b"),
    ex("caf\u00e9/{x}", {"x": "1"}, "caf%C3%A9/1"),
    ex("x%2f{x}", {"x": "1"}, "x%2f1"),
    ex("{x:3}", {"x": "\U0001d11ea\u00e9b"}, "%F0%9D%84%9Ea%C3%A9"),
])
case("matches_levels_1_to_3", "matching returns the values a URI was built from", [
    m("file:///{path}", "file:///README.md", {"path": "README.md"}),
    m("db://{table}/{id}", "db://users/42", {"table": "users", "id": "42"}),
    m("file:///{path}", "file:///a/b", None),
    m("file:///{+path}", "file:///a/b", {"path": "a/b"}),
    m("{hello}", "Hello%20World%21", {"hello": "Hello World!"}),
    m("map?{x,y}", "map?1024,768", {"x": "1024", "y": "768"}),
    m("X{.x,y}", "X.1024.768", {"x": "1024", "y": "768"}),
    m("{/var,x}/here", "/value/1024/here", {"var": "value", "x": "1024"}),
    m("{;x,y,empty}", ";x=1024;y=768;empty", {"x": "1024", "y": "768", "empty": ""}),
    m("{?x,y,empty}", "?x=1024&y=768&empty=", {"x": "1024", "y": "768", "empty": ""}),
    m("?fixed=yes{&x}", "?fixed=yes&x=1024", {"x": "1024"}),
    m("{#path,x}/here", "#/foo/bar,1024/here", {"path": "/foo/bar", "x": "1024"}),
    m("db://{table}/{id}", "db://users", None),
    m("db://{table}/{id}", "file://users/1", None),
])
case("matches_ambiguous", "the documented readings of ambiguous URIs (docs/templates.md)", [
    # each expression takes the longest span that lets the rest match
    m("{+a}/{b}", "x/y/z", {"a": "x/y", "b": "z"}),
    m("{x}{y}", "ab", {"x": "ab", "y": ""}),
    # fewer values than variables: the leftmost get them
    m("{x,y}", "a", {"x": "a"}),
    # an empty simple expression is the empty string; one with an operator character is undefined
    m("file:///{path}", "file:///", {"path": ""}),
    m("x{/a}{?q}", "x", {}),
    m("x{/a}", "x/", {"a": ""}),
    # a comma inside one variable's value: a list (simple expansion encodes a comma in a string)
    m("{list}", "red,green,blue", {"list": ["red", "green", "blue"]}),
    m("{+list}", "red,green,blue", {"list": "red,green,blue"}),
    m("{x,list}", "a,b,c", {"x": "a", "list": ["b", "c"]}),
    # an associative array without explode comes back as a list
    m("{keys}", "semi,%3B,dot,.", {"keys": ["semi", ";", "dot", "."]}),
    # explode: a list, or an associative array when every item is name=value
    m("{/list*}", "/red/green", {"list": ["red", "green"]}),
    m("{/list*}", "/red", {"list": ["red"]}),
    m("{keys*}", "a=1,b=2", {"keys": {"a": "1", "b": "2"}}),
    m("{?list*}", "?list=a&list=b", {"list": ["a", "b"]}),
    m("{?id,keys*}", "?id=7&a=1&b=2", {"id": "7", "keys": {"a": "1", "b": "2"}}),
    m("{/a*,b}", "/1/2/3", {"a": ["1", "2"], "b": "3"}),
    # named operators: names in template order, no unknown names, ? and & always write =
    m("/s{?q,lang}", "/s?lang=en", {"lang": "en"}),
    m("/s{?q,lang}", "/s?lang=en&q=x", None),
    m("/s{?q}", "/s?q=x&page=2", None),
    m("/s{?q}", "/s?q", None),
    # a label's dots: the last variable takes the rest
    m("{.x,y}", ".a.b.c", {"x": "a", "y": "b.c"}),
    # prefixes: at most that many characters
    m("{x:3}", "abc", {"x": "abc"}),
    m("{x:3}", "abcd", None),
    m("{x:2}{y}", "abcd", {"x": "ab", "y": "cd"}),
    m("{/var:1,var}", "/v/value", {"var": "value"}),
    # a name used twice must agree
    m("{x}/{x}", "a/a", {"x": "a"}),
    m("{x}/{x}", "a/b", None),
])
case("matches_decoding", "+ and # keep the triplets reserved expansion passes through; other values are decoded", [
    m("{x}", "a%2Fb%20c", {"x": "a/b c"}),
    m("{+x}", "a%2Fb%20c", {"x": "a%2Fb c"}),
    m("{+x}", "%25foo%41", {"x": "%25foo%41"}),
    m("{#x}", "#%CE%B1/", {"x": "\u03b1/"}),
    m("{x}", "a%FFb%c3%a9", {"x": "a%FFb\u00e9"}),
    m("{x}", "\u00e9t\u00e9", {"x": "\u00e9t\u00e9"}),
    m("{x}", "a\u200eb", None),
    m("{?q}", "?q=Gr%C3%BCner%20Weg", {"q": "Gr\u00fcner Weg"}),
])
case("matches_literals", "literals match as expand writes them; unreserved and non-ASCII characters also pct-encoded", [
    m("caf\u00e9/{x}", "caf%C3%A9/1", {"x": "1"}),
    m("caf\u00e9/{x}", "caf%c3%a9/1", {"x": "1"}),
    m("caf\u00e9/{x}", "caf\u00e9/1", {"x": "1"}),
    m("caf%C3%A9/{x}", "caf\u00e9/1", {"x": "1"}),
    m("a~b/{x}", "a%7Eb/1", {"x": "1"}),
    m("x%41/{x}", "xA/1", {"x": "1"}),
    m("a/b/{x}", "a%2Fb/1", None),
    m("A/{x}", "a/1", None),
])
case("matches_errors", "an invalid template, a URI over 8,192 bytes, a search over its budget", [
    m("{x", "x", error="invalid_uri_template"),
    m("{x}", "a" * 8193, error="invalid_argument"),
    m("{+x}", "a" * 8192, {"x": "a" * 8192}),
    m("".join("{+v%d}" % i for i in range(20)) + "~~", "a" * 2000, error="match_limit"),
])


def main() -> None:
    write_all(OUT, CASES, "template")


if __name__ == "__main__":
    main()
