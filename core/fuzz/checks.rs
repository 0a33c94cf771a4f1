//! The properties the fuzz targets check, shared with plain `cargo test`.
//!
//! This file depends only on `std`, `mcplens` and `serde_json`, so three places compile it:
//! the cargo-fuzz targets in `core/fuzz/fuzz_targets/` (one `check_*` entry point each),
//! `core/tests/rules/fuzz_regressions.rs` (replays every committed seed and crash file through the same
//! entry points, no fuzz toolchain needed) and the `core/tests/rules/proptest_*.rs` properties (which
//! build the same input structs with proptest strategies and call the same checkers).
//!
//! Structured inputs are decoded from the fuzzer's bytes with [`Bytes`], a tiny reader that
//! returns zeros once the data runs out, so every byte string is a valid input.

#![allow(clippy::too_many_lines)]

use std::fmt::Write as _;
use std::time::{Duration, UNIX_EPOCH};

use mcplens::discovery::{DiscoveryError, Era, Item, Limits, ListKind, Outcome, Pager, RepeatedCursors};
use mcplens::sanitize::{self, TemplateProblem, MAX_CHARS};
use mcplens::template::{self, Values};
use mcplens::tracking::ids::IdGen;
use mcplens::tracking::{
    string_hook, BuildConfig, Event, EventBuilder, Identity, Method, Operation, Payload, PayloadLimits, PeerInfo,
    RequestId, RpcError, SessionInfo, SessionKey, StringHook, TrackingError,
};
use serde_json::{Map, Value};

// ---------------------------------------------------------------------------------------------
// The byte reader
// ---------------------------------------------------------------------------------------------

/// Reads structured choices from fuzz bytes; zeros once the data runs out.
pub struct Bytes<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Bytes<'a> {
    /// A reader over `data`.
    pub fn new(data: &'a [u8]) -> Bytes<'a> {
        Bytes { data, pos: 0 }
    }

    /// True once every byte was read.
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }

    /// One byte (0 when exhausted).
    pub fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    /// Two bytes, little endian.
    pub fn u16(&mut self) -> u16 {
        u16::from(self.u8()) | (u16::from(self.u8()) << 8)
    }

    /// Four bytes, little endian.
    pub fn u32(&mut self) -> u32 {
        u32::from(self.u16()) | (u32::from(self.u16()) << 16)
    }

    /// A number in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        if n <= 256 {
            usize::from(self.u8()) % n
        } else {
            self.u32() as usize % n
        }
    }

    /// A coin flip.
    pub fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }

    /// True with probability about `1/n`.
    pub fn one_in(&mut self, n: u8) -> bool {
        self.u8().is_multiple_of(n.max(1))
    }

    /// Up to `n` raw bytes (fewer at the end of the data).
    pub fn take(&mut self, n: usize) -> &'a [u8] {
        let start = self.pos.min(self.data.len());
        let end = (start + n).min(self.data.len());
        self.pos = start + n;
        &self.data[start..end]
    }
}

// ---------------------------------------------------------------------------------------------
// Free text
// ---------------------------------------------------------------------------------------------

/// Characters that sanitizing, templates and redaction care about.
const INTERESTING: &[char] = &[
    '\u{1B}',
    '[',
    ']',
    '\u{07}',
    '\n',
    '\t',
    '\r',
    '\u{0}',
    '\u{7F}',
    '\u{85}',
    '\u{90}',
    '\u{9B}',
    '\u{9C}',
    '\u{9D}',
    '\u{9F}',
    '\u{061C}',
    '\u{200B}',
    '\u{200D}',
    '\u{200E}',
    '\u{202A}',
    '\u{202E}',
    '\u{2060}',
    '\u{2066}',
    '\u{2069}',
    '\u{FEFF}',
    '\u{E0001}',
    '\u{E0041}',
    '\u{E007F}',
    '\u{E0100}',
    '\u{E01EF}',
    '\u{FDD0}',
    '\u{FDEF}',
    '\u{FFFE}',
    '\u{FFFF}',
    '\u{1FFFE}',
    '\u{10FFFF}',
    '\u{FFFD}',
    '\u{FE0F}',
    '\u{A0}',
    '\u{2028}',
    'é',
    '😀',
    '…',
    '{',
    '}',
    '%',
    ',',
    ':',
    '*',
    '.',
    '/',
    '?',
    '&',
    '#',
    '+',
    ';',
    '=',
    '"',
    '\\',
    ' ',
    'a',
    'Z',
    '0',
    '9',
    '_',
    '-',
    '~',
    '@',
    '\u{E000}',
    '\u{F0000}',
];

/// A character: mostly from [`INTERESTING`], sometimes any scalar value. Never `'7'`: the digit
/// 7 is reserved for planted secrets, so free text can never imitate one.
pub fn any_char(b: &mut Bytes<'_>) -> char {
    let c = match b.u8() % 8 {
        0..=3 => INTERESTING[b.below(INTERESTING.len())],
        4 => char::from(0x20 + b.u8() % 0x5F),
        5 => char::from_u32(u32::from(b.u16())).unwrap_or('\u{FFFD}'),
        6 => char::from_u32(b.u32() % 0x11_0000).unwrap_or('x'),
        _ => char::from(b'a' + b.u8() % 26),
    };
    if c == '7' {
        '8'
    } else {
        c
    }
}

/// Free text of up to `max` characters, sometimes repeated to a long string (up to `long`
/// characters in all). Never contains `'7'`.
pub fn free_text(b: &mut Bytes<'_>, max: usize, long: usize) -> String {
    let n = b.below(max + 1);
    let mut s: String = (0..n).map(|_| any_char(b)).collect();
    if long > 0 && !s.is_empty() && b.one_in(8) {
        let target = b.below(long + 1);
        while s.chars().count() < target {
            let chunk = s.clone();
            s.push_str(&chunk);
        }
        let cut = s.char_indices().nth(target).map_or(s.len(), |(i, _)| i);
        s.truncate(cut);
    }
    s
}

/// Arbitrary bytes as text: as is when they are UTF-8, else with U+FFFD for every bad sequence
/// (what a host's decoder does).
pub fn lossy(data: &[u8]) -> String {
    String::from_utf8_lossy(data).into_owned()
}

// ---------------------------------------------------------------------------------------------
// 1. Sanitizer
// ---------------------------------------------------------------------------------------------

/// Fuzz entry: arbitrary bytes through `label` and `text`.
pub fn check_sanitize(data: &[u8]) {
    let s = lossy(data);
    check_sanitized(&s);
}

/// The sanitizer's properties on one input: no forbidden code point in the output (no control
/// at all in labels; only `\n` and `\t` in text), never over [`MAX_CHARS`] characters, ends in
/// `…` exactly when cut, idempotent, unchanged when there was nothing to do.
pub fn check_sanitized(input: &str) {
    for (mode, out) in [("label", sanitize::label(input)), ("text", sanitize::text(input))] {
        let out: &str = &out;
        assert!(std::str::from_utf8(out.as_bytes()).is_ok());
        for c in out.chars() {
            assert!(!sanitize::is_forbidden_invisible(c), "{mode}: U+{:04X} survived", c as u32);
            let allowed = mode == "text" && (c == '\n' || c == '\t');
            assert!(!c.is_control() || allowed, "{mode}: control U+{:04X} survived", c as u32);
        }
        let n = out.chars().count();
        assert!(n <= MAX_CHARS, "{mode}: {n} characters");
        let again = if mode == "label" { sanitize::label(out) } else { sanitize::text(out) };
        assert_eq!(again, out, "{mode}: not idempotent");
        let nothing_to_do = input.chars().count() <= MAX_CHARS
            && !input.chars().any(|c| c.is_control() || sanitize::is_forbidden_invisible(c));
        let kept_controls_only = mode == "text"
            && input.chars().count() <= MAX_CHARS
            && !input
                .chars()
                .any(|c| (c.is_control() && c != '\n' && c != '\t') || sanitize::is_forbidden_invisible(c));
        if nothing_to_do || kept_controls_only {
            assert_eq!(out, input, "{mode}: changed a clean string");
        }
        let clean = !input.chars().any(|c| c.is_control() || sanitize::is_forbidden_invisible(c));
        if clean && input.chars().count() > MAX_CHARS {
            let mut cut: String = input.chars().take(MAX_CHARS - 1).collect();
            cut.push(sanitize::ELLIPSIS);
            assert_eq!(out, cut, "{mode}: not cut to 2,047 characters and the mark");
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 2. RFC 6570 checker and a reference grammar
// ---------------------------------------------------------------------------------------------

/// Template fragments the fuzzer and proptest glue together.
pub const TEMPLATE_PIECES: &[&str] = &[
    "file:///",
    "http://e.com/",
    "a",
    "Z",
    "_",
    "0",
    "9",
    "{",
    "}",
    "{+",
    "{#",
    "{.",
    "{/",
    "{;",
    "{?",
    "{&",
    "{=",
    "{,",
    "{!",
    "{@",
    "{|",
    "var",
    "x",
    "x.y",
    ".",
    ",",
    ":",
    ":1",
    ":9999",
    ":10000",
    ":0",
    ":01",
    "*",
    "%",
    "%4",
    "%41",
    "%zz",
    "%e2%80%8e",
    " ",
    "\u{200E}",
    "\u{7}",
    "é",
    "\u{A0}",
    "\u{E000}",
    "\u{F8FF}",
    "\u{FFFD}",
    "\u{FDD0}",
    "\u{FFEF}",
    "\u{FFF0}",
    "\u{1F600}",
    "\u{E0041}",
    "\u{E1000}",
    "<",
    ">",
    "\"",
    "'",
    "\\",
    "^",
    "`",
    "|",
    "~",
    "-",
    "!",
    "$",
    "&",
    "(",
    ")",
    "=",
    "[",
    "]",
    "@",
    "?",
    "#",
    "/",
    ";",
    "+",
    "'",
    "\"",
];

/// A template-ish string from fuzz bytes: mostly pieces, sometimes free characters.
pub fn template_text(b: &mut Bytes<'_>, max_pieces: usize) -> String {
    let n = b.below(max_pieces + 1);
    let mut s = String::new();
    for _ in 0..n {
        if b.one_in(6) {
            s.push(any_char(b));
        } else {
            s.push_str(TEMPLATE_PIECES[b.below(TEMPLATE_PIECES.len())]);
        }
    }
    if b.one_in(64) {
        // Around the length cap.
        let target = MAX_CHARS - 2 + b.below(5);
        while s.chars().count() < target {
            s.push('a');
        }
    }
    s
}

// ---------------------------------------------------------------------------------------------
// Templates: variables, expand, matches
// ---------------------------------------------------------------------------------------------

const VALUE_PIECES: &[&str] = &[
    "a", "Z", "0", "-", ".", "_", "~", "/", "?", "#", "&", "=", ",", ";", "%", "%41", "%c3%a9", "%FF", " ", "é", "😀",
    "'", "+", "*", "!", ":",
];

fn value_text(b: &mut Bytes<'_>) -> String {
    let n = b.below(6);
    (0..n)
        .map(
            |_| {
                if b.one_in(5) {
                    any_char(b).to_string()
                } else {
                    VALUE_PIECES[b.below(VALUE_PIECES.len())].to_owned()
                }
            },
        )
        .collect()
}

/// Values for `names` from fuzz bytes: strings, lists, associative arrays, undefined.
fn values_for(b: &mut Bytes<'_>, names: &[String]) -> Values {
    let mut v = Values::new();
    for name in names {
        match b.below(5) {
            0 => {}
            1 | 2 => {
                v.insert(name.clone(), value_text(b));
            }
            3 => {
                let items = (0..b.below(4)).map(|_| value_text(b)).collect::<Vec<_>>();
                v.insert(name.clone(), items);
            }
            _ => {
                let pairs = (0..b.below(4)).map(|_| (value_text(b), value_text(b))).collect::<Vec<_>>();
                v.insert(name.clone(), pairs);
            }
        }
    }
    v
}

/// Uppercases the hex digits of pct-encoded triplets (RFC 3986 §6.2.2.1), for comparing URIs.
fn normalize_pct(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut upper = 0;
    for c in s.chars() {
        if c == '%' {
            upper = 2;
            out.push(c);
        } else if upper > 0 {
            upper -= 1;
            out.push(c.to_ascii_uppercase());
        } else {
            out.push(c);
        }
    }
    out
}

/// Fuzz entry `template`: arbitrary bytes as a template and a URI, and a template built from
/// grammar pieces with values, through `variables`, `expand` and `matches`.
pub fn check_template_ops(data: &[u8]) {
    let text = lossy(data);
    let (t, uri) = text.split_once('\n').unwrap_or((&text, ""));
    check_template_text(t, uri);
    let mut b = Bytes::new(data);
    let t = template_text(&mut b, 16);
    let uri = template_text(&mut b, 8);
    check_template_text(&t, &uri);
    check_round_trip(&mut b, &t);
}

/// Never panics; the parser is the discovery check; `expand` writes URI characters within the cap;
/// `matches` names only the template's variables.
pub fn check_template_text(t: &str, uri: &str) {
    let parsed = template::Template::parse(t);
    assert_eq!(parsed.is_ok(), template::check_uri_template(t).is_ok(), "one parser: {t:?}");
    assert_eq!(parsed.is_ok(), reference_template(t).is_ok(), "the reference grammar disagrees on {t:?}");
    let Ok(parsed) = parsed else { return };
    let names: Vec<String> = parsed.variables().into_iter().map(|v| v.name).collect();
    for values in [Values::new(), values_for(&mut Bytes::new(uri.as_bytes()), &names)] {
        if let Ok(out) = parsed.expand(&values) {
            assert!(out.len() <= template::MAX_URI_BYTES);
            assert!(out.bytes().all(|c| c.is_ascii_graphic()), "{t:?} expanded to a non-URI character: {out:?}");
            assert_eq!(parsed.expand(&values).as_deref(), Ok(out.as_str()), "deterministic");
        }
    }
    if let Ok(Some(found)) = parsed.matches(uri) {
        for (name, _) in found.iter() {
            assert!(names.iter().any(|n| n == name), "{t:?} on {uri:?}: {name} is not a variable");
        }
    }
}

/// For a template whose expressions have one variable each, all names distinct: whatever `expand`
/// writes, `matches` reads back (or gives up: `match_limit`), and the values it finds expand to the
/// same URI (up to the case of pct-encoded hex digits).
fn check_round_trip(b: &mut Bytes<'_>, t: &str) {
    let Ok(parsed) = template::Template::parse(t) else { return };
    let vars = parsed.variables();
    let mut names: Vec<String> = vars.iter().map(|v| v.name.clone()).collect();
    names.sort();
    names.dedup();
    let single = t.matches('{').count() == vars.len();
    if !single || names.len() != vars.len() {
        return;
    }
    let values = values_for(b, &names);
    let Ok(uri) = parsed.expand(&values) else { return };
    match parsed.matches(&uri) {
        Ok(Some(found)) => {
            let back = parsed
                .expand(&found)
                .unwrap_or_else(|e| panic!("{t:?}: {} from {uri:?} does not expand: {e}", found.to_json()));
            assert_eq!(normalize_pct(&back), normalize_pct(&uri), "{t:?}: {uri:?} matched as {}", found.to_json());
        }
        Ok(None) => panic!("{t:?}: its own expansion {uri:?} (of {}) does not match", values.to_json()),
        Err(e) => assert_eq!(e.code(), "match_limit", "{t:?} on {uri:?}: {e}"),
    }
}

/// Fuzz entry: arbitrary bytes (and a template built from them) through the checker.
pub fn check_uri_template(data: &[u8]) {
    check_template(&lossy(data));
    let mut b = Bytes::new(data);
    check_template(&template_text(&mut b, 24));
}

/// The checker never panics and agrees with [`reference_template`], problem for problem.
pub fn check_template(t: &str) {
    let got = template::check_uri_template(t);
    let want = reference_template(t);
    assert_eq!(got, want, "check_uri_template disagrees with the reference grammar on {t:?}");
}

/// A second, independent reading of RFC 6570 (levels 1–4) plus the mcplens character rules,
/// written from the RFC's ABNF (section 2) over a character array, for differential checks.
pub fn reference_template(t: &str) -> Result<(), TemplateProblem> {
    let c: Vec<char> = t.chars().collect();
    if c.len() > MAX_CHARS {
        return Err(TemplateProblem::TooLong);
    }
    if c.iter().any(|&x| x.is_control() || x.is_whitespace() || sanitize::is_forbidden_invisible(x) || x == '\u{FFFD}')
    {
        return Err(TemplateProblem::ForbiddenChar);
    }
    let mut i = 0;
    while i < c.len() {
        i = match c[i] {
            '{' => ref_expression(&c, i + 1),
            '%' => ref_pct(&c, i),
            x if ref_literal(x) => Some(i + 1),
            _ => None,
        }
        .ok_or(TemplateProblem::Syntax)?;
    }
    Ok(())
}

/// `literals` of RFC 6570 §2.1: printable ASCII except `"%<>\^`{|}` and space, plus `ucschar`
/// and `iprivate` (RFC 3987). The RFC also leaves out `'`; mcplens reads it as a literal
/// (`docs/templates.md`), and so does this reference.
fn ref_literal(x: char) -> bool {
    if x.is_ascii() {
        return ('\u{21}'..='\u{7E}').contains(&x) && !"\"%<>\\^`{|}".contains(x);
    }
    let u = x as u32;
    let ucschar = [
        (0xA0, 0xD7FF),
        (0xF900, 0xFDCF),
        (0xFDF0, 0xFFEF),
        (0x10000, 0x1FFFD),
        (0x20000, 0x2FFFD),
        (0x30000, 0x3FFFD),
        (0x40000, 0x4FFFD),
        (0x50000, 0x5FFFD),
        (0x60000, 0x6FFFD),
        (0x70000, 0x7FFFD),
        (0x80000, 0x8FFFD),
        (0x90000, 0x9FFFD),
        (0xA0000, 0xAFFFD),
        (0xB0000, 0xBFFFD),
        (0xC0000, 0xCFFFD),
        (0xD0000, 0xDFFFD),
        (0xE1000, 0xEFFFD),
    ];
    let iprivate = [(0xE000, 0xF8FF), (0xF0000, 0xFFFFD), (0x100000, 0x10FFFD)];
    ucschar.iter().chain(&iprivate).any(|&(lo, hi)| (lo..=hi).contains(&u))
}

/// `pct-encoded` at `i`: the index after it.
fn ref_pct(c: &[char], i: usize) -> Option<usize> {
    let hex = |k: usize| c.get(k).is_some_and(char::is_ascii_hexdigit);
    (c.get(i) == Some(&'%') && hex(i + 1) && hex(i + 2)).then_some(i + 3)
}

/// `varchar` at `i`.
fn ref_varchar(c: &[char], i: usize) -> Option<usize> {
    match c.get(i)? {
        x if x.is_ascii_alphanumeric() || *x == '_' => Some(i + 1),
        '%' => ref_pct(c, i),
        _ => None,
    }
}

/// `expression` after its `{`: the index after the closing `}`.
fn ref_expression(c: &[char], mut i: usize) -> Option<usize> {
    // op-level2 / op-level3; op-reserve ("=,!@|") is reserved and so invalid.
    if matches!(c.get(i), Some('+' | '#' | '.' | '/' | ';' | '?' | '&')) {
        i += 1;
    }
    loop {
        // varname = varchar *( ["."] varchar )
        i = ref_varchar(c, i)?;
        loop {
            if c.get(i) == Some(&'.') {
                i = ref_varchar(c, i + 1)?;
            } else if let Some(j) = ref_varchar(c, i) {
                i = j;
            } else {
                break;
            }
        }
        // modifier-level4 = prefix / explode; max-length = %x31-39 0*3DIGIT
        match c.get(i) {
            Some(':') => {
                i += 1;
                if !matches!(c.get(i), Some('1'..='9')) {
                    return None;
                }
                i += 1;
                let start = i;
                while c.get(i).is_some_and(char::is_ascii_digit) {
                    i += 1;
                }
                if i - start > 3 {
                    return None;
                }
            }
            Some('*') => i += 1,
            _ => {}
        }
        match c.get(i) {
            Some(',') => i += 1,
            Some('}') => return Some(i + 1),
            _ => return None,
        }
    }
}

// ---------------------------------------------------------------------------------------------
// 3. Pages and the pager
// ---------------------------------------------------------------------------------------------

/// Every stable discovery code.
const CODES: &[&str] = &[
    "malformed_result",
    "repeated_cursor",
    "page_limit",
    "item_limit",
    "byte_limit",
    "deadline",
    "server_error",
    "transport_error",
    "invalid_argument",
    "invalid_state",
];

/// Fuzz entry: arbitrary bytes as one page, for each list kind, with the default limits and with
/// tight ones.
pub fn check_page(data: &[u8]) {
    let text = lossy(data);
    let tight =
        Limits { max_pages: 2, max_items: 3, max_bytes: 400, deadline: Duration::from_secs(1), ..Limits::default() };
    for kind in [ListKind::ResourceTemplates, ListKind::Resources] {
        for limits in [Limits::default(), tight] {
            check_one_page(kind, &text, limits);
        }
    }
}

/// One page through a fresh pager: never panics; an error is final (fail closed); a finished
/// listing satisfies [`check_listing`]; a continuing traversal asks for exactly one cursor.
pub fn check_one_page(kind: ListKind, text: &str, limits: Limits) {
    let mut pager = Pager::new(kind, "fuzz", true, limits, Duration::ZERO).expect("valid limits");
    let request = pager.poll_request().expect("page 1");
    assert_eq!(request.cursor, None, "page 1 has no cursor");
    assert_eq!(request.params_json(), None);
    match pager.handle_outcome(Outcome::Page(text), Duration::from_millis(1)) {
        Err(e) => assert_failed_for_good(pager, &e),
        Ok(()) if pager.is_done() => {
            let listing = pager.finish().expect("a done traversal finishes");
            check_listing(kind, &listing, &limits);
        }
        Ok(()) => {
            let next = pager.poll_request().expect("a continuing traversal asks again");
            let params: Value = serde_json::from_str(&next.params_json().expect("params")).expect("JSON params");
            let obj = params.as_object().expect("params object");
            assert_eq!(obj.len(), 1);
            assert!(obj["cursor"].is_string());
            // The traversal is unfinished: finishing now is a host error, never a listing.
            assert_eq!(pager.finish().map(|_| ()).unwrap_err().code(), "invalid_state");
        }
    }
}

/// After an error the pager is failed for good: no request, the same error again, no listing.
pub fn assert_failed_for_good(mut pager: Pager, e: &DiscoveryError) {
    assert!(CODES.contains(&e.code().as_str()), "unknown code {}", e.code());
    assert!(pager.is_done());
    assert!(pager.poll_request().is_none(), "a failed traversal asked again");
    let again = pager.handle_outcome(Outcome::Page(r#"{"resourceTemplates":[],"resources":[]}"#), Duration::ZERO);
    assert_eq!(again.as_ref().err(), Some(e), "a failed pager accepted more");
    let finished = pager.finish();
    assert_eq!(finished.as_ref().err(), Some(e), "a failed traversal produced a listing (a prefix)");
}

/// A complete listing: within its bounds, every string sanitized (a fixed point of the
/// sanitizer), every template valid, and the byte count equal to the serialized sizes.
pub fn check_listing(kind: ListKind, listing: &mcplens::Listing, limits: &Limits) {
    assert_eq!(listing.kind, kind);
    let d = &listing.diagnostics;
    assert_eq!(d.items, listing.items.len());
    assert!(d.items <= limits.max_items);
    assert!(d.bytes <= limits.max_bytes, "{} > {}", d.bytes, limits.max_bytes);
    assert!(d.requests <= limits.max_pages);
    let mut bytes = 0;
    for item in &listing.items {
        let json = serde_json::to_string(item).expect("items serialize");
        assert_eq!(item.json_len(), json.len(), "json_len disagrees with serde_json for {json}");
        bytes += json.len();
        assert_eq!(item.server(), "fuzz");
        let fixed_label = |s: &str| assert_eq!(sanitize::label(s), s, "unsanitized label {s:?}");
        let fixed_text = |s: &str| assert_eq!(sanitize::text(s), s, "unsanitized text {s:?}");
        match item {
            Item::Template(t) => {
                assert_eq!(kind, ListKind::ResourceTemplates);
                assert_eq!(template::check_uri_template(&t.uri_template), Ok(()));
                fixed_label(&t.name);
                t.title.as_deref().map(fixed_label);
                t.mime_type.as_deref().map(fixed_label);
                t.description.as_deref().map(fixed_text);
                check_annotations(t.annotations.as_ref());
            }
            Item::Resource(r) => {
                assert_eq!(kind, ListKind::Resources);
                assert!(!r.uri.is_empty());
                assert_eq!(sanitize::check_uri_chars(&r.uri), Ok(()));
                fixed_label(&r.name);
                r.title.as_deref().map(fixed_label);
                r.mime_type.as_deref().map(fixed_label);
                r.description.as_deref().map(fixed_text);
                check_annotations(r.annotations.as_ref());
            }
        }
        // Projection: nothing but the documented keys.
        let v: Value = serde_json::from_str(&json).expect("item JSON");
        for k in v.as_object().expect("item object").keys() {
            assert!(
                ["uriTemplate", "uri", "name", "title", "description", "mimeType", "size", "annotations", "server"]
                    .contains(&k.as_str()),
                "unprojected key {k}"
            );
        }
    }
    assert_eq!(bytes, d.bytes, "byte accounting differs from the serialized sizes");
}

fn check_annotations(a: Option<&mcplens::discovery::Annotations>) {
    let Some(a) = a else { return };
    assert!(!a.is_empty());
    if let Some(p) = a.priority {
        assert!((0.0..=1.0).contains(&p));
    }
    if let Some(t) = &a.last_modified {
        assert!(mcplens::discovery::is_rfc3339_date_time(t));
    }
}

/// A JSON value of an optional field, valid or not.
#[derive(Debug, Clone, PartialEq)]
pub enum Val {
    /// A string (free text).
    Str(String),
    /// A string holding a lone UTF-16 surrogate escape.
    LoneSurrogate,
    /// An integer.
    Int(i64),
    /// A float.
    Float(f64),
    /// `null`.
    Null,
    /// `true`.
    Bool,
    /// An array of strings.
    Arr(Vec<String>),
    /// An object nested this deep.
    Nested(u32),
}

/// What an item looks like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ItemForm {
    /// A proper object.
    Object,
    /// Not an object.
    NotObject,
    /// No identifier.
    MissingId,
    /// A non-string identifier.
    NonStringId,
    /// No name.
    MissingName,
    /// A non-string name.
    NonStringName,
    /// `name` twice.
    DuplicateName,
}

/// One item of a generated page.
#[derive(Debug, Clone, PartialEq)]
pub struct ItemSpec {
    /// Its shape.
    pub form: ItemForm,
    /// `uriTemplate` / `uri` (string form).
    pub id: Val,
    /// `name` (string form).
    pub name: Val,
    /// `title`.
    pub title: Option<Val>,
    /// `description`.
    pub description: Option<Val>,
    /// `mimeType`.
    pub mime_type: Option<Val>,
    /// `size`.
    pub size: Option<Val>,
    /// `annotations`: `None`, or `(audience, priority, lastModified, duplicate key)` in an object,
    /// or a non-object.
    pub annotations: Option<AnnotationsSpec>,
    /// `_meta` nesting depth (0: none).
    pub meta_depth: u32,
    /// An `icons` array and an unknown key.
    pub extras: bool,
}

/// `annotations` of a generated item.
#[derive(Debug, Clone, PartialEq)]
pub enum AnnotationsSpec {
    /// Not an object.
    NotObject(Val),
    /// An object.
    Object {
        /// `audience`.
        audience: Option<Val>,
        /// `priority`.
        priority: Option<Val>,
        /// `lastModified`.
        last_modified: Option<Val>,
        /// `priority` twice (malformed).
        duplicate: bool,
    },
}

/// `nextCursor` of a generated page.
#[derive(Debug, Clone, PartialEq)]
pub enum CursorSpec {
    /// No `nextCursor` key.
    Absent,
    /// `null`.
    Null,
    /// A planted cursor string `CUR7SOR{n}` (never shown anywhere).
    Fresh(u32),
    /// The same as the `i`-th cursor already sent (modulo how many were sent); fresh if none.
    Repeat(usize),
    /// `""`.
    Empty,
    /// A number.
    Number,
    /// A string with a lone surrogate escape (cannot be sent back exactly).
    LoneSurrogate,
}

/// The page's overall shape.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shape {
    /// An object with the item array.
    Ok,
    /// Not an object.
    NotObject,
    /// No item array.
    NoList,
    /// The item "array" is an object.
    ListNotArray,
    /// The item array key twice.
    DuplicateList,
    /// Trailing garbage after the object.
    Trailing,
}

/// A generated page.
#[derive(Debug, Clone, PartialEq)]
pub struct PageSpec {
    /// Overall shape.
    pub shape: Shape,
    /// Items.
    pub items: Vec<ItemSpec>,
    /// `nextCursor`.
    pub cursor: CursorSpec,
    /// `resultType`: `None` absent, else the value.
    pub result_type: Option<Val>,
    /// `ttlMs`.
    pub ttl_ms: Option<Val>,
    /// `cacheScope`.
    pub cache_scope: Option<Val>,
    /// `_meta` nesting depth on the result (0: none).
    pub meta_depth: u32,
}

/// One answer the host feeds the pager.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// A generated page.
    Page(PageSpec),
    /// Arbitrary text as the page.
    Raw(String),
    /// A JSON-RPC error.
    Rpc(i64),
    /// The host's typed client refused the page.
    Malformed,
    /// The transport failed.
    Transport,
    /// The host's timeout fired.
    TimedOut,
}

/// A whole traversal: kind, limits, eligibility and the answers with the time each took.
#[derive(Debug, Clone, PartialEq)]
pub struct Script {
    /// Which list.
    pub kind: ListKind,
    /// Bounds (`max_pages` ≥ 1, `deadline` > 0).
    pub limits: Limits,
    /// Does the server declare `resources`?
    pub capable: bool,
    /// The negotiated protocol version (`""`: none given, the legacy rules).
    pub protocol_version: &'static str,
    /// `(answer, milliseconds it took)`, in order; the traversal stops when they run out.
    pub steps: Vec<(Step, u32)>,
}

impl Script {
    /// Is a repeated cursor followed (else it fails the traversal)?
    fn follows_repeats(&self) -> bool {
        match self.limits.repeated_cursors {
            RepeatedCursors::ByEra => Era::of(self.protocol_version) == Era::Modern,
            RepeatedCursors::Fail => false,
            RepeatedCursors::Follow => true,
        }
    }
}

fn val(b: &mut Bytes<'_>, good: impl FnOnce(&mut Bytes<'_>) -> Val) -> Val {
    match b.u8() % 12 {
        0..=5 => good(b),
        6 => Val::Str(free_text(b, 12, 3000)),
        7 => Val::Int(i64::from(b.u16() as i16) * i64::from(b.u8())),
        8 => Val::Float(f64::from(b.u16()) / 1000.0 - 1.0),
        9 => [Val::Null, Val::Bool, Val::LoneSurrogate][b.below(3)].clone(),
        10 => Val::Arr((0..b.below(3)).map(|_| free_text(b, 10, 0)).collect()),
        _ => Val::Nested(1 + u32::from(b.u8()) * if b.one_in(16) { 100 } else { 1 }),
    }
}

fn valid_template(b: &mut Bytes<'_>) -> String {
    const GOOD: &[&str] = &[
        "file:///{path}",
        "db://{table}/{id}",
        "http://e.com/{+path}/here{?q,lang}{&x*}{#frag:3}",
        "{/list*}{;keys}{.dom}",
        "mem://t{i}/{id}",
        "",
        "ü/{x}",
        "%41{x:9999}",
    ];
    GOOD[b.below(GOOD.len())].to_owned()
}

fn gen_item(b: &mut Bytes<'_>, kind: ListKind) -> ItemSpec {
    let form = match b.u8() % 24 {
        0 => ItemForm::NotObject,
        1 => ItemForm::MissingId,
        2 => ItemForm::NonStringId,
        3 => ItemForm::MissingName,
        4 => ItemForm::NonStringName,
        5 => ItemForm::DuplicateName,
        _ => ItemForm::Object,
    };
    let id = match b.u8() % 8 {
        0..=3 => Val::Str(match kind {
            ListKind::ResourceTemplates => valid_template(b),
            ListKind::Resources => format!("file:///r{}", b.u8()),
        }),
        4 | 5 => Val::Str(template_text(b, 8)),
        6 => Val::LoneSurrogate,
        _ => Val::Str(free_text(b, 8, 3000)),
    };
    let name = if b.one_in(8) { Val::LoneSurrogate } else { Val::Str(free_text(b, 12, 4000)) };
    let opt = |b: &mut Bytes<'_>, good: fn(&mut Bytes<'_>) -> Val| b.bool().then(|| val(b, good));
    let title = opt(b, |b| Val::Str(free_text(b, 12, 3000)));
    let description = opt(b, |b| Val::Str(free_text(b, 24, 5000)));
    let mime_type = opt(b, |_| Val::Str("text/plain".into()));
    let size = opt(b, |b| Val::Int(i64::from(b.u32())));
    let annotations = match b.u8() % 4 {
        0 | 1 => None,
        2 => Some(AnnotationsSpec::NotObject(val(b, |_| Val::Null))),
        _ => Some(AnnotationsSpec::Object {
            audience: opt(b, |b| Val::Arr((0..b.below(3)).map(|i| ["user", "assistant"][i % 2].to_owned()).collect())),
            priority: opt(b, |b| Val::Float(f64::from(b.u8()) / 255.0)),
            last_modified: opt(b, |_| Val::Str("2025-01-02T03:04:05Z".into())),
            duplicate: b.one_in(16),
        }),
    };
    let meta_depth = if b.one_in(4) { 1 + u32::from(b.u8()) * if b.one_in(16) { 100 } else { 1 } } else { 0 };
    ItemSpec { form, id, name, title, description, mime_type, size, annotations, meta_depth, extras: b.bool() }
}

/// A page from fuzz bytes.
pub fn gen_page(b: &mut Bytes<'_>, kind: ListKind) -> PageSpec {
    let shape = match b.u8() % 32 {
        0 => Shape::NotObject,
        1 => Shape::NoList,
        2 => Shape::ListNotArray,
        3 => Shape::DuplicateList,
        4 => Shape::Trailing,
        _ => Shape::Ok,
    };
    let n = if b.one_in(16) { b.below(40) } else { b.below(5) };
    let items = (0..n).map(|_| gen_item(b, kind)).collect();
    let cursor = match b.u8() % 10 {
        0 | 1 => CursorSpec::Absent,
        2 => CursorSpec::Null,
        3..=5 => CursorSpec::Fresh(u32::from(b.u8())),
        6 => CursorSpec::Repeat(b.below(8)),
        7 => CursorSpec::Empty,
        8 => CursorSpec::Number,
        _ => CursorSpec::LoneSurrogate,
    };
    let result_type = match b.u8() % 8 {
        0 => Some(Val::Str("complete".into())),
        1 => Some(val(b, |_| Val::Str("incomplete".into()))),
        _ => None,
    };
    let ttl_ms = b.one_in(4).then(|| val(b, |b| Val::Int(i64::from(b.u16()))));
    let cache_scope = b.one_in(4).then(|| val(b, |_| Val::Str("session".into())));
    let meta_depth = match b.u8() % 32 {
        0 => 1 + u32::from(b.u16()) * 2,
        1..=4 => 1 + u32::from(b.u8()),
        _ => 0,
    };
    PageSpec { shape, items, cursor, result_type, ttl_ms, cache_scope, meta_depth }
}

/// A traversal script from fuzz bytes.
pub fn gen_script(b: &mut Bytes<'_>) -> Script {
    let kind = if b.bool() { ListKind::ResourceTemplates } else { ListKind::Resources };
    let limits = Limits {
        max_pages: 1 + u32::from(b.u8() % 8),
        max_items: if b.one_in(4) { 10_000 } else { b.below(24) },
        max_bytes: if b.one_in(4) { 1_000_000 } else { b.below(6000) },
        deadline: Duration::from_millis(1 + u64::from(b.u16())),
        // The cursor settings stay at their defaults (legacy era: repeats fail), so the committed
        // seeds keep their meaning; tests/vectors/discovery pins the modern rule.
        ..Limits::default()
    };
    let capable = !b.one_in(16);
    let mut steps = Vec::new();
    while !b.is_empty() && steps.len() < 12 {
        let step = match b.u8() % 16 {
            0 => Step::Rpc([-32601, -32600, -32603, 0, i64::MIN, i64::from(b.u16() as i16)][b.below(6)]),
            1 => Step::Malformed,
            2 => Step::Transport,
            3 => Step::TimedOut,
            4 => {
                let n = b.below(64);
                Step::Raw(lossy(b.take(n)))
            }
            _ => Step::Page(gen_page(b, kind)),
        };
        let ms = if b.one_in(4) { u32::from(b.u16()) } else { u32::from(b.u8() % 8) };
        steps.push((step, ms));
    }
    Script { kind, limits, capable, protocol_version: "", steps }
}

fn write_str(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).expect("strings serialize"));
}

fn write_nested(out: &mut String, depth: u32) {
    for i in 0..depth {
        out.push_str(if i % 2 == 0 { "{\"a\":[" } else { "[{\"b\":" });
    }
    out.push('1');
    for i in (0..depth).rev() {
        out.push_str(if i % 2 == 0 { "]}" } else { "}]" });
    }
}

fn write_val(out: &mut String, v: &Val) {
    match v {
        Val::Str(s) => write_str(out, s),
        Val::LoneSurrogate => out.push_str("\"x\\ud800y\\udc00\""),
        Val::Int(i) => {
            let _ = write!(out, "{i}");
        }
        Val::Float(f) => out.push_str(&serde_json::to_string(f).expect("finite floats serialize")),
        Val::Null => out.push_str("null"),
        Val::Bool => out.push_str("true"),
        Val::Arr(xs) => {
            out.push('[');
            for (i, x) in xs.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_str(out, x);
            }
            out.push(']');
        }
        Val::Nested(d) => write_nested(out, *d),
    }
}

fn write_key(out: &mut String, first: &mut bool, key: &str) {
    if !*first {
        out.push(',');
    }
    *first = false;
    write_str(out, key);
    out.push(':');
}

fn write_item(out: &mut String, kind: ListKind, it: &ItemSpec) {
    let id_key = match kind {
        ListKind::ResourceTemplates => "uriTemplate",
        ListKind::Resources => "uri",
    };
    if it.form == ItemForm::NotObject {
        out.push_str("[1]");
        return;
    }
    out.push('{');
    let mut first = true;
    match it.form {
        ItemForm::MissingId => {}
        ItemForm::NonStringId => {
            write_key(out, &mut first, id_key);
            out.push('5');
        }
        _ => {
            write_key(out, &mut first, id_key);
            write_val(out, &it.id);
        }
    }
    match it.form {
        ItemForm::MissingName => {}
        ItemForm::NonStringName => {
            write_key(out, &mut first, "name");
            out.push_str("null");
        }
        _ => {
            write_key(out, &mut first, "name");
            write_val(out, &it.name);
        }
    }
    if it.form == ItemForm::DuplicateName {
        write_key(out, &mut first, "name");
        out.push_str("\"again\"");
    }
    for (key, v) in
        [("title", &it.title), ("description", &it.description), ("mimeType", &it.mime_type), ("size", &it.size)]
    {
        if let Some(v) = v {
            write_key(out, &mut first, key);
            write_val(out, v);
        }
    }
    match &it.annotations {
        None => {}
        Some(AnnotationsSpec::NotObject(v)) => {
            write_key(out, &mut first, "annotations");
            write_val(out, v);
        }
        Some(AnnotationsSpec::Object { audience, priority, last_modified, duplicate }) => {
            write_key(out, &mut first, "annotations");
            out.push('{');
            let mut f = true;
            for (key, v) in [("audience", audience), ("priority", priority), ("lastModified", last_modified)] {
                if let Some(v) = v {
                    write_key(out, &mut f, key);
                    write_val(out, v);
                }
            }
            if *duplicate {
                write_key(out, &mut f, "priority");
                out.push_str("0.5");
                write_key(out, &mut f, "priority");
                out.push_str("0.5");
            }
            out.push('}');
        }
    }
    if it.meta_depth > 0 {
        write_key(out, &mut first, "_meta");
        write_nested(out, it.meta_depth);
    }
    if it.extras {
        write_key(out, &mut first, "icons");
        out.push_str(r#"[{"src":"data:image/svg+xml,<svg/>"}]"#);
        write_key(out, &mut first, "xUnknown");
        out.push_str(r#"{"k":[1,2,3]}"#);
    }
    out.push('}');
}

/// The cursor string a [`CursorSpec`] stands for, given the cursors already sent (`None`: no
/// string cursor).
fn cursor_string(c: &CursorSpec, sent: &[String]) -> Option<String> {
    match c {
        CursorSpec::Fresh(n) => Some(format!("CUR7SOR{n}")),
        CursorSpec::Repeat(i) if !sent.is_empty() => Some(sent[i % sent.len()].clone()),
        CursorSpec::Repeat(i) => Some(format!("CUR7SOR-r{i}")),
        CursorSpec::Empty => Some(String::new()),
        _ => None,
    }
}

/// The JSON text of a generated page.
pub fn render_page(kind: ListKind, p: &PageSpec, sent: &[String]) -> String {
    let mut out = String::new();
    if p.shape == Shape::NotObject {
        out.push_str("[]");
        return out;
    }
    out.push('{');
    let mut first = true;
    let list_key = kind.list_key();
    if p.shape != Shape::NoList {
        write_key(&mut out, &mut first, list_key);
        if p.shape == Shape::ListNotArray {
            out.push_str("{}");
        } else {
            out.push('[');
            for (i, it) in p.items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_item(&mut out, kind, it);
            }
            out.push(']');
        }
        if p.shape == Shape::DuplicateList {
            write_key(&mut out, &mut first, list_key);
            out.push_str("[]");
        }
    }
    match &p.cursor {
        CursorSpec::Absent => {}
        CursorSpec::Null => {
            write_key(&mut out, &mut first, "nextCursor");
            out.push_str("null");
        }
        CursorSpec::Number => {
            write_key(&mut out, &mut first, "nextCursor");
            out.push_str("12");
        }
        CursorSpec::LoneSurrogate => {
            write_key(&mut out, &mut first, "nextCursor");
            out.push_str("\"CUR7SOR\\udfff\"");
        }
        c => {
            write_key(&mut out, &mut first, "nextCursor");
            write_str(&mut out, &cursor_string(c, sent).expect("a string cursor"));
        }
    }
    for (key, v) in [("resultType", &p.result_type), ("ttlMs", &p.ttl_ms), ("cacheScope", &p.cache_scope)] {
        if let Some(v) = v {
            write_key(&mut out, &mut first, key);
            write_val(&mut out, v);
        }
    }
    if p.meta_depth > 0 {
        write_key(&mut out, &mut first, "_meta");
        write_nested(&mut out, p.meta_depth);
    }
    out.push('}');
    if p.shape == Shape::Trailing {
        out.push_str(" x");
    }
    out
}

/// Projected bytes of a page's kept items, measured with a fresh unbounded pager (the cursor and
/// `resultType` left out).
fn page_bytes(kind: ListKind, p: &PageSpec) -> Option<usize> {
    let bare = PageSpec { cursor: CursorSpec::Absent, result_type: None, ..p.clone() };
    let text = render_page(kind, &bare, &[]);
    let unbounded = Limits {
        max_pages: 1,
        max_items: usize::MAX,
        max_bytes: usize::MAX,
        deadline: Duration::MAX,
        ..Limits::default()
    };
    let mut pager = Pager::new(kind, "fuzz", true, unbounded, Duration::ZERO).ok()?;
    pager.poll_request()?;
    pager.handle_outcome(Outcome::Page(&text), Duration::ZERO).ok()?;
    Some(pager.finish().ok()?.diagnostics.bytes)
}

/// What the rules say a step does: `Ok((ends, next cursor))` or the error code.
type Expected = Result<(bool, Option<String>), &'static str>;

/// What the documented rules say a generated page does (`docs/discovery.md`, "order of checks
/// per page"). `Ok(true)`: the traversal ends; `Ok(false)`: it asks again with `next`.
fn expect_page(s: &Script, p: &PageSpec, sent: &[String], seen_items: usize, bytes: usize, requests: u32) -> Expected {
    let kind = s.kind;
    if p.shape != Shape::Ok
        || p.items.iter().any(|it| {
            matches!(it.form, ItemForm::NotObject | ItemForm::DuplicateName)
                || matches!(it.annotations, Some(AnnotationsSpec::Object { duplicate: true, .. }))
        })
    {
        return Err("malformed_result");
    }
    if seen_items + p.items.len() > s.limits.max_items {
        return Err("item_limit");
    }
    match &p.result_type {
        None => {}
        Some(Val::Str(t)) if t == "complete" => {}
        Some(_) => return Err("malformed_result"),
    }
    if matches!(p.cursor, CursorSpec::Number | CursorSpec::LoneSurrogate) {
        return Err("malformed_result");
    }
    let structural = |it: &ItemSpec| {
        matches!(it.form, ItemForm::MissingId | ItemForm::NonStringId | ItemForm::MissingName | ItemForm::NonStringName)
    };
    if p.items.iter().any(structural) {
        return Err("malformed_result");
    }
    let page = page_bytes(kind, p).expect("a well-formed page projects");
    if bytes + page > s.limits.max_bytes {
        return Err("byte_limit");
    }
    let Some(next) = cursor_string(&p.cursor, sent) else { return Ok((true, None)) };
    if next.len() > s.limits.max_cursor_bytes {
        return Err("malformed_result");
    }
    if sent.contains(&next) && !s.follows_repeats() {
        return Err("repeated_cursor");
    }
    if requests >= s.limits.max_pages {
        return Err("page_limit");
    }
    Ok((false, Some(next)))
}

/// Fuzz entry: a structured traversal.
pub fn check_pager_sequence(data: &[u8]) {
    let mut b = Bytes::new(data);
    let script = gen_script(&mut b);
    run_script(&script);
}

/// Drives a pager through `script` next to a model of the documented rules: never panics, never
/// disagrees with the model on the outcome code, sends back exactly the cursor it was given,
/// fails closed (no listing after an error), keeps cursors out of errors, and a complete listing
/// passes [`check_listing`] with bytes equal to the sum of the pages' projected bytes.
///
/// The model covers generated pages; after an arbitrary (raw) page it only checks invariants.
pub fn run_script(s: &Script) {
    let mut pager = Pager::new(s.kind, "fuzz", s.capable, s.limits, Duration::ZERO)
        .expect("valid limits")
        .with_protocol_version(s.protocol_version);
    if !s.capable {
        assert!(pager.poll_request().is_none(), "an ineligible server was asked");
        let listing = pager.finish().expect("an empty listing");
        assert!(listing.items.is_empty());
        assert_eq!(listing.diagnostics.requests, 0);
        return;
    }
    let mut now = 0u64;
    let mut sent: Vec<String> = Vec::new();
    // The cursor the next request must carry, while the model knows it.
    let mut expect_cursor: Option<Option<String>> = Some(None);
    let mut modelled = true;
    let (mut seen_items, mut bytes, mut requests) = (0usize, 0usize, 0u32);
    // Cursors followed although already sent, while the model knows them.
    let mut repeats = Some(0u32);
    for (step, ms) in &s.steps {
        let Some(request) = pager.poll_request() else { break };
        requests += 1;
        assert_eq!(request.method, s.kind.method());
        if let Some(want) = &expect_cursor {
            assert_eq!(&request.cursor, want, "the pager must send back the cursor it was given, exactly");
        }
        if let Some(c) = &request.cursor {
            sent.push(c.clone());
        }
        let remaining = pager.remaining(Duration::from_millis(now));
        assert_eq!(remaining, s.limits.deadline.saturating_sub(Duration::from_millis(now)));
        now += u64::from(*ms);
        let at = Duration::from_millis(now);
        let late = at > s.limits.deadline;
        let text;
        let mut page_bytes_now = None;
        let (outcome, expected): (Outcome<'_>, Option<Expected>) = match step {
            Step::Page(p) => {
                text = render_page(s.kind, p, &sent);
                let e = if late {
                    Some(Err("deadline"))
                } else if modelled {
                    let e = expect_page(s, p, &sent, seen_items, bytes, requests);
                    if e.is_ok() {
                        page_bytes_now = page_bytes(s.kind, p);
                    }
                    Some(e)
                } else {
                    None
                };
                (Outcome::Page(&text), e)
            }
            Step::Raw(t) => (Outcome::Page(t), late.then_some(Err("deadline"))),
            Step::Rpc(code) => {
                let e = if late {
                    Err("deadline")
                } else if *code == -32601 && s.kind == ListKind::ResourceTemplates && requests == 1 {
                    Ok((true, None))
                } else {
                    Err("server_error")
                };
                (Outcome::RpcError { code: *code }, Some(e))
            }
            Step::Malformed => (Outcome::Malformed, Some(Err(if late { "deadline" } else { "malformed_result" }))),
            Step::Transport => (Outcome::Transport, Some(Err(if late { "deadline" } else { "transport_error" }))),
            Step::TimedOut => (Outcome::TimedOut, Some(Err("deadline"))),
        };
        let got = pager.handle_outcome(outcome, at);
        match (&got, expected) {
            (Err(e), want) => {
                let msg = format!("{e} {e:?}");
                assert!(!msg.contains("CUR7SOR"), "a cursor leaked into an error: {msg}");
                if let Some(want) = want {
                    assert_eq!(Err(e.code().as_str()), want.map(|_| ()), "step {step:?}");
                }
                if e.code() == "server_error" {
                    assert!(matches!(step, Step::Rpc(_)));
                }
                return assert_failed_for_good(pager, e);
            }
            (Ok(()), Some(Err(want))) => panic!("step {step:?}: accepted, but the rules say {want}"),
            (Ok(()), Some(Ok((done, next)))) => {
                assert_eq!(pager.is_done(), done, "step {step:?}");
                if let (Some(n), Some(c)) = (&mut repeats, &next) {
                    *n += u32::from(sent.contains(c));
                }
                expect_cursor = Some(next);
            }
            (Ok(()), None) => {
                modelled = false;
                expect_cursor = None;
                repeats = None;
            }
        }
        if let Step::Page(p) = step {
            seen_items += p.items.len();
            bytes += page_bytes_now.unwrap_or(0);
        }
        if !modelled {
            bytes = pager.diagnostics().bytes;
        }
        assert_eq!(pager.diagnostics().bytes, bytes, "byte accounting");
        if pager.is_done() {
            break;
        }
    }
    if pager.is_done() {
        let listing = pager.finish().expect("a traversal that ended without error finishes");
        check_listing(s.kind, &listing, &s.limits);
        assert_eq!(listing.diagnostics.bytes, bytes);
        if let Some(n) = repeats {
            assert_eq!(listing.diagnostics.repeated_cursors, n, "repeats counted");
        }
    } else {
        // Ran out of answers mid-traversal: there is no listing.
        assert_eq!(pager.finish().map(|_| ()).unwrap_err().code(), "invalid_state");
    }
}

// ---------------------------------------------------------------------------------------------
// 4. Tracking: event building, redaction, caps
// ---------------------------------------------------------------------------------------------

/// The text every planted secret contains (free text never holds a `7`).
pub const SECRET_MARK: &str = "7PLANTED";

/// The `n`-th planted secret: 21 or more alphanumeric characters, every 8-character window of
/// which holds a `7`.
pub fn secret(n: usize) -> String {
    format!("7PLANTED7{n:04}7zzqxwv7")
}

/// How a secret is planted in a string.
pub const PLANT_CONTEXTS: usize = 9;

/// `secret` inside text as a credential the built-in rules must catch.
pub fn planted(context: usize, secret: &str) -> String {
    match context % PLANT_CONTEXTS {
        0 => format!(" Bearer {secret} "),
        1 => format!(" basic {secret} "),
        2 => format!(" eyJhbGciOiJIUzI1NiJ9.eyJ{secret}.{secret} "),
        3 => format!(" https://api.example.com/v1/x?page=2&token={secret}&q=1 "),
        4 => format!("\nAuthorization: Token {secret}\n"),
        5 => format!(" sk-{secret} "),
        6 => format!(" postgres://admin:{secret}@db:5432/app "),
        7 => format!("\ncookie: session={secret}\n"),
        _ => format!(" s3://b/k?X-Amz-Signature={secret} "),
    }
}

/// A payload as the host passes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Pay {
    /// None.
    None,
    /// JSON text (maybe invalid).
    Json(String),
    /// A value.
    Value(Value),
    /// Left out by the host (this many bytes).
    Omitted(u64),
}

impl Pay {
    fn payload(&self) -> Payload<'_> {
        match self {
            Pay::None => Payload::None,
            Pay::Json(t) => Payload::Json(t),
            Pay::Value(v) => Payload::Value(v),
            Pay::Omitted(n) => Payload::Omitted(*n),
        }
    }
}

/// A request id.
#[derive(Debug, Clone, PartialEq)]
pub enum Rid {
    /// None.
    None,
    /// A number.
    Number(i64),
    /// A string.
    Text(String),
}

/// The user's string hook.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hook {
    /// None.
    None,
    /// Returns its input.
    Identity,
    /// Fails on strings holding `'!'`.
    FailsSometimes,
}

/// One operation to build an event from.
#[derive(Debug, Clone, PartialEq)]
pub struct TrackCase {
    /// The method.
    pub method: Method,
    /// `capture_parameters`, `capture_responses`, `capture_resource_text`, `builtin_redaction`.
    pub flags: [bool; 4],
    /// The caps.
    pub limits: PayloadLimits,
    /// The JSON-RPC id.
    pub request_id: Rid,
    /// `params`.
    pub params: Pay,
    /// `_meta` held apart.
    pub meta: Pay,
    /// The result.
    pub result: Pay,
    /// A JSON-RPC error `(code, message)`.
    pub error: Option<(i64, String)>,
    /// The host says the tool result is an error.
    pub tool_error: bool,
    /// The session's client info `(name, version)`.
    pub client: Option<(String, Option<String>)>,
    /// The session's protocol version.
    pub protocol_version: Option<String>,
    /// The session's identity `(id, name, data)`.
    pub identity: Option<(Option<String>, Option<String>, Option<Value>)>,
    /// The string hook.
    pub hook: Hook,
    /// Where secrets were planted that the rules must catch (the planting is in the payloads).
    pub planted: usize,
}

/// Keys a generated object may use.
const KEYS: &[&str] = &[
    "uri",
    "name",
    "text",
    "blob",
    "type",
    "data",
    "contents",
    "content",
    "mimeType",
    "arguments",
    "_meta",
    "traceparent",
    "isError",
    "headers",
    "q",
    "items",
    "nested",
    "max_tokens",
    "tokens",
    "keyword",
    "a",
    "…",
    "~/",
];

/// Keys whose string values are redacted whole.
const SECRET_KEYS: &[&str] =
    &["password", "Authorization", "x-api-key", "apiKey", "client_secret", "githubToken", "Cookie", "DB_PASSWORD"];

/// Generation state: how many secrets were planted.
struct Planter {
    n: usize,
}

fn gen_string(b: &mut Bytes<'_>, p: &mut Planter, long: usize) -> String {
    match b.u8() % 10 {
        0 | 1 => {
            let s = secret(p.n);
            p.n += 1;
            let mut out = free_text(b, 6, 0);
            out.push_str(&planted(b.below(PLANT_CONTEXTS), &s));
            out.push_str(&free_text(b, 6, 0));
            out
        }
        2 => {
            // A long string, maybe with a secret somewhere inside.
            let mut out = "x".repeat(b.below(long + 1));
            if b.bool() {
                let s = secret(p.n);
                p.n += 1;
                let at = b.below(out.len() + 1);
                out.insert_str(at, &planted(b.below(PLANT_CONTEXTS), &s));
            }
            out
        }
        3 => "data:;base64,QUJD".to_owned(),
        4 => ["00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "QUJDRA==", "ok!", "https://h/x"][b.below(4)]
            .to_owned(),
        _ => free_text(b, 16, long),
    }
}

fn gen_value(b: &mut Bytes<'_>, p: &mut Planter, depth: u32, long: usize) -> Value {
    let container = depth < 14 && b.u8().is_multiple_of(3);
    if !container {
        return match b.u8() % 8 {
            0 => Value::Null,
            1 => Value::Bool(b.bool()),
            2 => Value::from(i64::from(b.u32() as i32)),
            3 => Value::from(f64::from(b.u16()) / 7.0),
            _ => Value::String(gen_string(b, p, long)),
        };
    }
    let n = if b.one_in(8) { b.below(130) } else { b.below(4) };
    if b.bool() {
        Value::Array((0..n).map(|_| gen_value(b, p, depth + 1, long)).collect())
    } else {
        let mut m = Map::new();
        for _ in 0..n {
            let key = match b.u8() % 8 {
                0 => SECRET_KEYS[b.below(SECRET_KEYS.len())].to_owned(),
                1 | 2 => {
                    let long = if b.one_in(32) { 3000 } else { 0 };
                    free_text(b, 8, long)
                }
                _ => KEYS[b.below(KEYS.len())].to_owned(),
            };
            let v = if SECRET_KEYS.iter().any(|k| *k == key) && b.bool() {
                let s = secret(p.n);
                p.n += 1;
                Value::String(s)
            } else {
                gen_value(b, p, depth + 1, long)
            };
            m.insert(key, v);
        }
        Value::Object(m)
    }
}

/// A `resources/read` result with text and blob contents.
fn gen_read_result(b: &mut Bytes<'_>, p: &mut Planter, long: usize) -> Value {
    let n = b.below(4);
    let contents: Vec<Value> = (0..n)
        .map(|_| {
            let mut m = Map::new();
            m.insert("uri".into(), Value::String(gen_string(b, p, 0)));
            if b.bool() {
                m.insert("mimeType".into(), Value::String("text/plain".into()));
            }
            if b.bool() {
                m.insert("text".into(), Value::String(gen_string(b, p, long)));
            } else {
                let blob = if b.bool() { "QUJDRA==".to_owned() } else { free_text(b, 12, 0) };
                m.insert("blob".into(), Value::String(blob));
            }
            Value::Object(m)
        })
        .collect();
    serde_json::json!({ "contents": contents, "_meta": gen_value(b, p, 12, 0) })
}

/// JSON text of `v`, sometimes with spaces or `\u` escapes (which force the slow path).
fn to_text(b: &mut Bytes<'_>, v: &Value) -> String {
    let compact = serde_json::to_string(v).expect("values serialize");
    match b.u8() % 6 {
        0 => serde_json::to_string_pretty(v).expect("values serialize"),
        1 => compact.replace("\"a\"", "\"\\u0061\""),
        _ => compact,
    }
}

fn gen_pay(b: &mut Bytes<'_>, p: &mut Planter, method: &Method, result: bool, long: usize) -> Pay {
    let v = if result && *method == Method::ResourcesRead && b.bool() {
        gen_read_result(b, p, long)
    } else if !result && method.resource_name_key().is_some() && b.bool() {
        let key = method.resource_name_key().expect("checked");
        let mut m = Map::new();
        m.insert(key.to_owned(), Value::String(gen_string(b, p, long)));
        if b.bool() {
            m.insert("arguments".into(), gen_value(b, p, 1, long));
        }
        if b.bool() {
            m.insert("_meta".into(), serde_json::json!({"traceparent": gen_string(b, p, 0)}));
        }
        Value::Object(m)
    } else if result && *method == Method::ToolsCall && b.bool() {
        serde_json::json!({
            "content": [{"type": "text", "text": gen_string(b, p, long)}, {"type": "image", "data": "QUJD", "mimeType": "image/png"}],
            "isError": b.bool(),
        })
    } else {
        gen_value(b, p, 0, long)
    };
    match b.u8() % 10 {
        0 => Pay::None,
        1 => Pay::Omitted(u64::from(b.u32())),
        2 => {
            let n = b.below(48);
            Pay::Json(lossy(b.take(n)))
        }
        3 | 4 => Pay::Value(v),
        _ => Pay::Json(to_text(b, &v)),
    }
}

/// A tracking case from fuzz bytes.
pub fn gen_track(b: &mut Bytes<'_>) -> TrackCase {
    let method = Method::from_code(b.u8() % 10).expect("ten methods");
    let flags = [!b.one_in(8), !b.one_in(8), b.one_in(4), !b.one_in(16)];
    let limits = PayloadLimits {
        max_string_bytes: 64 + if b.one_in(4) { b.below(40_000) } else { b.below(600) },
        max_depth: 1 + b.below(12),
        max_breadth: 1 + b.below(120),
        max_event_bytes: if b.one_in(4) { 102_400 } else { b.below(20_000) },
    };
    let long = if b.one_in(8) { 140_000 } else { 2_000 };
    let mut p = Planter { n: 0 };
    let request_id = match b.u8() % 4 {
        0 => Rid::None,
        1 => Rid::Text(free_text(b, 12, 0)),
        _ => Rid::Number(i64::from(b.u32())),
    };
    let params = if method == Method::Initialize && b.bool() {
        Pay::Value(serde_json::json!({
            "protocolVersion": "2025-06-18",
            "clientInfo": {"name": free_text(b, 12, 0), "version": "1.0"},
            "capabilities": gen_value(b, &mut p, 8, 0),
        }))
    } else {
        gen_pay(b, &mut p, &method, false, long)
    };
    let meta = if b.one_in(4) {
        Pay::Value(
            serde_json::json!({"traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", "progressToken": gen_string(b, &mut p, 0)}),
        )
    } else {
        Pay::None
    };
    let result = gen_pay(b, &mut p, &method, true, long);
    let error = b.one_in(4).then(|| (i64::from(b.u16() as i16), gen_string(b, &mut p, long)));
    let tool_error = b.one_in(8);
    let client = b.one_in(3).then(|| (free_text(b, 12, 0), b.bool().then(|| free_text(b, 6, 0))));
    let protocol_version = b.bool().then(|| "2025-06-18".to_owned());
    let identity = b.one_in(4).then(|| {
        (
            b.bool().then(|| free_text(b, 12, 0)),
            b.bool().then(|| gen_string(b, &mut p, 0)),
            b.bool().then(|| gen_value(b, &mut p, 0, long)),
        )
    });
    let hook = [Hook::None, Hook::None, Hook::Identity, Hook::FailsSometimes][b.below(4)];
    TrackCase {
        method,
        flags,
        limits,
        request_id,
        params,
        meta,
        result,
        error,
        tool_error,
        client,
        protocol_version,
        identity,
        hook,
        planted: p.n,
    }
}

/// Fuzz entry: one operation through the event builder.
pub fn check_tracking_event(data: &[u8]) {
    let mut b = Bytes::new(data);
    let case = gen_track(&mut b);
    check_track(&case);
}

fn builder(case: &TrackCase) -> EventBuilder {
    let hook: Option<StringHook> = match case.hook {
        Hook::None => None,
        Hook::Identity => Some(string_hook(|s: &str| Ok(s.to_owned()))),
        Hook::FailsSometimes => {
            Some(string_hook(
                |s: &str| {
                    if s.contains('!') {
                        Err(TrackingError::hook("a '!'"))
                    } else {
                        Ok(s.to_owned())
                    }
                },
            ))
        }
    };
    let [capture_parameters, capture_responses, capture_resource_text, builtin_redaction] = case.flags;
    let config = BuildConfig {
        capture_parameters,
        capture_responses,
        capture_resource_text,
        builtin_redaction,
        limits: case.limits,
        server: Some(PeerInfo::new("fuzz-server", Some("0.1.0"))),
        redact_string: hook,
        redact_event: None,
        estimate_tokens: false,
    };
    EventBuilder::new(config, IdGen::seeded(42))
}

fn session(case: &TrackCase) -> SessionInfo {
    SessionInfo {
        id: "ses_2fQzR0u6Yx6w1h6yH7rB1cP9aZk".into(),
        transport: None,
        client: case.client.as_ref().map(|(n, v)| PeerInfo::new(n.clone(), v.as_deref())),
        protocol_version: case.protocol_version.clone(),
        identity: case.identity.as_ref().map(|(id, name, data)| Identity {
            id: id.clone(),
            name: name.clone(),
            data: data.clone(),
        }),
    }
}

fn operation<'a>(case: &'a TrackCase, params: Payload<'a>) -> Operation<'a> {
    Operation {
        request_id: match &case.request_id {
            Rid::None => RequestId::None,
            Rid::Number(n) => RequestId::Number(*n),
            Rid::Text(t) => RequestId::Text(t),
        },
        params,
        meta: case.meta.payload(),
        result: case.result.payload(),
        error: case.error.as_ref().map(|(code, message)| RpcError { code: *code, message }),
        tool_error: case.tool_error,
        ..Operation::new(
            SessionKey(1),
            case.method.clone(),
            UNIX_EPOCH + Duration::from_millis(1_767_323_045_678),
            Duration::from_micros(2_345),
        )
    }
}

/// The event cap as the builder applies it.
pub fn event_cap(limits: &PayloadLimits) -> usize {
    limits.max_event_bytes.max(4096)
}

/// The builder's properties on one operation: never panics; the event JSON is at most the event
/// cap and parses back to the event; every string of the payloads is within the string cap and
/// no payload nests deeper than the depth cap; no planted secret survives (built-in redaction on);
/// and JSON text and the same value as a parsed value give the same event.
pub fn check_track(case: &TrackCase) {
    let built = builder(case).build(&operation(case, case.params.payload()), &session(case));
    let built = match built {
        Ok(b) => b,
        Err(mcplens::tracking::NotBuilt::HookFailed(_)) if case.hook == Hook::FailsSometimes => return,
        Err(e) => panic!("no event: {e:?}"),
    };
    let json = &built.json;
    // fuzz_findings::kept_json_text_keeps_its_newlines
    assert!(!json.contains(['\n', '\r']), "an event is one JSONL line");
    let cap = event_cap(&case.limits);
    // fuzz_findings::uncapped_event_fields, truncation_paths_escape_the_event_cap, escaping_is_not_counted
    assert!(json.len() <= cap, "event of {} bytes over the {cap}-byte cap: {}", json.len(), sizes(json));
    // The JSON reads back as the event (floats within serde_json's parsing precision).
    let back: Value = serde_json::from_str(json).expect("the event JSON parses back");
    let event = serde_json::to_value(&built.event).expect("events serialize");
    assert!(same_json(&back, &event), "the event JSON does not round-trip:\n{back}\n{event}");
    serde_json::from_str::<Event>(json).expect("the event JSON reads back as an Event");
    if case.flags[3] {
        assert!(!json.contains(SECRET_MARK), "a planted secret survived: {}", excerpt(json, SECRET_MARK));
    }
    let ev = &built.event;
    let max = case.limits.max_string_bytes;
    for (what, v) in [
        ("parameters", ev.parameters.as_ref().map(|j| j.value().into_owned())),
        ("response", ev.response.as_ref().map(|j| j.value().into_owned())),
        ("identity.data", ev.identity.as_ref().and_then(|i| i.data.clone())),
    ] {
        if let Some(v) = v {
            check_capped(&v, 0, &case.limits, what);
        }
    }
    if let Some(r) = &ev.resource_name {
        assert!(r.len() <= max, "resourceName of {} bytes", r.len());
    }
    if let Some(e) = &ev.error {
        assert!(e.message.len() <= max, "error.message of {} bytes", e.message.len());
    }
    // fuzz_findings::uncapped_event_fields
    let peer =
        |p: &Option<PeerInfo>| p.as_ref().map_or(0, |p| p.name.len().max(p.version.as_ref().map_or(0, String::len)));
    let identity = ev
        .identity
        .as_ref()
        .map_or(0, |i| i.id.as_ref().map_or(0, String::len).max(i.name.as_ref().map_or(0, String::len)));
    let request_id = ev.request_id.as_ref().and_then(Value::as_str).map_or(0, str::len);
    let protocol = ev.protocol_version.as_ref().map_or(0, String::len);
    for (what, n) in [
        ("clientInfo", peer(&ev.client)),
        ("identity", identity),
        ("requestId", request_id),
        ("protocolVersion", protocol),
    ] {
        assert!(n <= max, "{what}: a string of {n} bytes");
    }
    // The fast path (text kept as is) and the parsed path agree.
    if let Pay::Json(text) = &case.params {
        let parsed = serde_json::from_str::<Value>(text);
        // fuzz_findings::array_params_name_the_resource
        if let Ok(v) = parsed {
            let other = builder(case).build(&operation(case, Payload::Value(&v)), &session(case));
            if let Ok(other) = other {
                let a: Value = serde_json::from_str(json).expect("JSON");
                let b: Value = serde_json::from_str(&other.json).expect("JSON");
                // fuzz_findings::payload_form_changes_capped_events, breadth_marker_counts_the_marker
                assert!(same_json(&a, &b), "JSON text and parsed value give different events:\n{a}\n{b}");
            }
        }
    }
}

fn check_capped(v: &Value, depth: usize, limits: &PayloadLimits, what: &str) {
    match v {
        Value::String(s) => assert!(s.len() <= limits.max_string_bytes, "{what}: a string of {} bytes", s.len()),
        Value::Array(a) if !a.is_empty() => {
            assert!(depth < limits.max_depth, "{what}: nested {depth} deep");
            assert!(a.len() <= limits.max_breadth + 1, "{what}: {} items", a.len());
            a.iter().for_each(|x| check_capped(x, depth + 1, limits, what));
        }
        Value::Object(m) if !m.is_empty() => {
            assert!(depth < limits.max_depth, "{what}: nested {depth} deep");
            assert!(m.len() <= limits.max_breadth + 1, "{what}: {} keys", m.len());
            // fuzz_findings::a_key_named_like_the_marker_escapes_the_caps
            m.values().for_each(|x| check_capped(x, depth + 1, limits, what));
        }
        _ => {}
    }
}

fn excerpt(s: &str, needle: &str) -> String {
    let at = s.find(needle).unwrap_or(0);
    let mut lo = at.saturating_sub(80);
    while !s.is_char_boundary(lo) {
        lo -= 1;
    }
    let mut hi = (at + 80).min(s.len());
    while !s.is_char_boundary(hi) {
        hi += 1;
    }
    s[lo..hi].to_owned()
}

/// JSON equality with numbers compared as `f64` within a relative 1e-12 (serde_json's default
/// float parsing is not correctly rounded, so a float may not survive text → value → text).
pub fn same_json(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            x == y || {
                let (x, y) = (x.as_f64().unwrap_or(f64::NAN), y.as_f64().unwrap_or(f64::NAN));
                (x - y).abs() <= 1e-12 * x.abs().max(y.abs())
            }
        }
        (Value::Array(x), Value::Array(y)) => x.len() == y.len() && x.iter().zip(y).all(|(x, y)| same_json(x, y)),
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| same_json(v, w)))
        }
        _ => a == b,
    }
}

/// The JSON size of each top-level field of an event, for failure messages.
fn sizes(json: &str) -> String {
    let v: Value = serde_json::from_str(json).unwrap_or(Value::Null);
    let m = v.as_object().cloned().unwrap_or_default();
    m.iter().map(|(k, v)| format!("{k}={}", v.to_string().len())).collect::<Vec<_>>().join(" ")
}

// ---------------------------------------------------------------------------------------------
// The proxy machine
// ---------------------------------------------------------------------------------------------

/// Ids of every JSON type, repeats likely (the host reuses ids; some collide with the proxy's).
const PROXY_IDS: &[&str] = &[
    "1",
    "2",
    "3",
    "0",
    "-1",
    "1.5",
    "1e3",
    "\"a\"",
    "\"b\"",
    "\"mcplens-proxy-1\"",
    "\"mcplens-proxy-2\"",
    "\"mcplens-proxy-3\"",
    "null",
    "true",
    "{}",
    "[1]",
    "\"\\u0061\"",
];

/// What the proxy's read cap is set to here (its answers to reads must fit it).
const PROXY_READ_CAP: usize = 1_000;

/// An upstream request the fuzzed server has not answered yet: its id (JSON text) and method.
struct Pending {
    id: String,
    method: String,
}

fn proxy_host_line(b: &mut Bytes<'_>, tools: &[String]) -> (Option<String>, String, bool) {
    let id = PROXY_IDS[b.below(PROXY_IDS.len())].to_owned();
    let tool = if tools.is_empty() || b.one_in(4) {
        ["ListMcpResourceTemplatesTool", "ListMcpResourcesTool", "ReadMcpResourceTool", "echo"][b.below(4)].to_owned()
    } else {
        tools[b.below(tools.len())].clone()
    };
    let uri = ["docs://a", "note://7", "file:///x", "", "a b", "docs://big"][b.below(6)];
    let server = ["null", "\"docs\"", "\"other\"", "7"][b.below(4)];
    let args = match b.below(4) {
        0 => format!(r#"{{"uri":"{uri}","server":{server}}}"#),
        1 => format!(r#"{{"offset":{},"limit":{}}}"#, b.below(5), b.below(3)),
        2 => "null".to_owned(),
        _ => r#"{"bogus":1}"#.to_owned(),
    };
    let read = tool.ends_with("ReadMcpResourceTool");
    let (line, request) = match b.below(12) {
        0 => (
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"initialize","params":{{"protocolVersion":"2025-06-18","capabilities":{{}},"clientInfo":{{"name":"h","version":"1"}}}}}}"#
            ),
            true,
        ),
        1 => (r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_owned(), false),
        2 => (format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#), true),
        3..=5 => (
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{tool}","arguments":{args}}}}}"#
            ),
            true,
        ),
        6 => (format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#), true),
        7 => {
            (format!(r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#), false)
        }
        8 => (format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/read","params":{{"uri":"{uri}"}}}}"#), true),
        9 => (format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"roots":[]}}}}"#), false),
        10 => (lossy(b.take(40)), false),
        _ => (
            format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"resources/templates/list","params":{{"cursor":"c"}}}}"#),
            true,
        ),
    };
    (request.then_some(id), line, read && request)
}

fn proxy_upstream_answer(b: &mut Bytes<'_>, p: &Pending, names: &[&str]) -> String {
    let id = &p.id;
    match (p.method.as_str(), b.below(6)) {
        (_, 0) => format!(r#"{{"jsonrpc":"2.0","id":{id},"error":{{"code":-32603,"message":"boom"}}}}"#),
        (_, 1) => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{}}}"#, lossy(b.take(24))),
        ("initialize", _) => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"protocolVersion":"2025-06-18","capabilities":{{"resources":{{"listChanged":true}}{}}},"serverInfo":{{"name":"docs","version":"1"}}}}}}"#,
            if b.bool() { r#","tools":{"listChanged":true}"# } else { "" }
        ),
        ("tools/list", _) => {
            let tools: Vec<String> = (0..b.below(4))
                .map(|_| format!(r#"{{"name":"{}","inputSchema":{{"type":"object"}}}}"#, names[b.below(names.len())]))
                .collect();
            format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"tools":[{}]}}}}"#, tools.join(","))
        }
        ("resources/list", _) => {
            let cursor = if b.one_in(3) { r#","nextCursor":"c""# } else { "" };
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resources":[{{"uri":"docs://a","name":"a"}},{{"uri":"docs://big","name":"big"}}]{cursor}}}}}"#
            )
        }
        ("resources/templates/list", _) => format!(
            r#"{{"jsonrpc":"2.0","id":{id},"result":{{"resourceTemplates":[{{"uriTemplate":"note://{{id}}","name":"n"}}]}}}}"#
        ),
        ("resources/read", _) => {
            let n = [0usize, 5, 900, 3_000][b.below(4)];
            let text = "line\n".repeat(n);
            let blob = if b.bool() { r#",{"uri":"docs://b","blob":"QUJD"}"# } else { "" };
            format!(
                r#"{{"jsonrpc":"2.0","id":{id},"result":{{"contents":[{{"uri":"docs://a","text":{}}}{blob}]}}}}"#,
                Value::from(text)
            )
        }
        _ => format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{}}}}"#),
    }
}

/// The raw text of a line's `id` and its `method`, when it is a JSON object.
fn proxy_envelope(line: &str) -> Option<(Option<String>, Option<String>)> {
    let v: Map<String, Value> = serde_json::from_str(line).ok()?;
    Some((v.get("id").map(|i| i.to_string()), v.get("method").and_then(Value::as_str).map(str::to_owned)))
}

/// `mcplens::proxy::Proxy` driven by arbitrary host and upstream lines in any interleaving (ids of
/// every JSON type, repeats, oversize messages, broken JSON, time passing, the host's end). The
/// fuzzed server answers each request it was sent at most once (or never, or with a message over
/// the bound), and sends requests, notifications and garbage of its own. Properties: no panic;
/// every line the proxy writes is JSON; no host request id is answered more often than the host
/// sent it; every tool result of the proxy's is within its cap (reads within the configured one).
pub fn check_proxy_sequence(data: &[u8]) {
    use mcplens::proxy::{Proxy, ProxyAction, ProxyConfig, Verdict};
    use mcplens::tool::ReadConfig;
    use std::collections::HashMap;

    let mut b = Bytes::new(data);
    let config = ProxyConfig {
        read: ReadConfig { max_output_chars: PROXY_READ_CAP, any_uri: b.one_in(3), ..ReadConfig::default() },
        max_message_bytes: 4096,
        ..ProxyConfig::default()
    };
    let mut proxy = Proxy::new(config).expect("a valid configuration");
    let mut now = Duration::ZERO;
    let mut sent: HashMap<String, usize> = HashMap::new(); // host request ids → times sent
    let mut answered: HashMap<String, usize> = HashMap::new();
    let mut reads: HashMap<String, usize> = HashMap::new(); // host read-tool call ids
    let mut pending: Vec<Pending> = Vec::new(); // what the upstream was sent and owes an answer to
    let mut tool_names: Vec<String> = Vec::new();
    let names =
        ["echo", "mcplens_ReadMcpResourceTool", "mcplens_ReadMcpResourceTool_2", "mcplens_ListMcpResourcesTool"];

    let perform = |proxy: &mut Proxy,
                   pending: &mut Vec<Pending>,
                   answered: &mut HashMap<String, usize>,
                   reads: &HashMap<String, usize>,
                   tool_names: &mut Vec<String>| {
        while let Some(action) = proxy.poll_action() {
            match action {
                ProxyAction::ToHost(line) => {
                    let (id, method) = proxy_envelope(&line).unwrap_or_else(|| panic!("not JSON to the host: {line}"));
                    if let (Some(id), None) = (id, method) {
                        let v: Value = serde_json::from_str(&line).unwrap();
                        if let Some(text) = v["result"]["content"][0]["text"].as_str() {
                            let cap = if reads.contains_key(&id) && v["result"].get("isError").is_none() {
                                PROXY_READ_CAP
                            } else {
                                mcplens::tool::MAX_OUTPUT_CHARS
                            };
                            assert!(text.chars().count() <= cap, "a tool result over its cap ({cap})");
                        }
                        if let Some(tools) = v["result"]["tools"].as_array() {
                            *tool_names = tools.iter().filter_map(|t| t["name"].as_str().map(str::to_owned)).collect();
                        }
                        *answered.entry(id).or_default() += 1;
                    }
                }
                ProxyAction::ToUpstream(line) => {
                    let (id, method) =
                        proxy_envelope(&line).unwrap_or_else(|| panic!("not JSON to the upstream: {line}"));
                    if let (Some(id), Some(method)) = (id, method) {
                        pending.push(Pending { id, method });
                    }
                }
                _ => {}
            }
        }
    };

    while !b.is_empty() {
        match b.below(8) {
            0..=2 => {
                let (id, line, read) = proxy_host_line(&mut b, &tool_names);
                // Ids are counted as JSON values (`"\u0061"` is `"a"`), as the answers are read.
                let id = id.map(|i| serde_json::from_str::<Value>(&i).map_or(i, |v| v.to_string()));
                if let Some(id) = &id {
                    *sent.entry(id.clone()).or_default() += 1;
                    if read {
                        *reads.entry(id.clone()).or_default() += 1;
                    }
                }
                if proxy.handle_host(line.as_bytes(), now) == Verdict::Forward {
                    if let Some((Some(id), Some(method))) = proxy_envelope(&line) {
                        pending.push(Pending { id, method });
                    }
                }
            }
            3 | 4 if !pending.is_empty() => {
                let p = pending.remove(b.below(pending.len()));
                if b.one_in(6) {
                    // Over the bound: its head (with or without the id) and tail reach the proxy.
                    let head = if b.bool() {
                        format!(r#"{{"jsonrpc":"2.0","id":{},"result":{{"#, p.id)
                    } else {
                        "{\"jsonrpc\":\"2.0\",\"result\":{\"x\":\"".to_owned()
                    };
                    proxy.handle_upstream_oversize(head.as_bytes(), b"\"}}", now);
                } else {
                    let line = proxy_upstream_answer(&mut b, &p, &names);
                    // Relayed to the host as it is: an answer when the host can read it as one.
                    let readable = matches!(proxy_envelope(&line), Some((Some(_), None)));
                    if proxy.handle_upstream(line.as_bytes(), now) == Verdict::Forward
                        && readable
                        && !p.id.starts_with("\"mcplens-proxy-")
                    {
                        *answered.entry(p.id.clone()).or_default() += 1;
                    }
                }
            }
            5 => {
                let line = match b.below(6) {
                    0 => r#"{"jsonrpc":"2.0","method":"notifications/resources/list_changed"}"#.to_owned(),
                    1 => r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#.to_owned(),
                    2 => format!(r#"{{"jsonrpc":"2.0","id":"s{}","method":"roots/list"}}"#, b.below(3)),
                    // A stray answer under one of the proxy's ids: never reaches the host.
                    3 => format!(r#"{{"jsonrpc":"2.0","id":"mcplens-proxy-{}","result":{{}}}}"#, b.below(5)),
                    4 => lossy(b.take(40)),
                    _ => r#"{"jsonrpc":"2.0","id":"mcplens-proxy-1","result":{"contents":[{"uri":"x","text":"y"}]}}"#
                        .to_owned(),
                };
                let _ = proxy.handle_upstream(line.as_bytes(), now);
            }
            6 => {
                let (h, t) = (b.below(64), b.below(64));
                let head = b.take(h);
                let tail = b.take(t);
                if b.bool() {
                    proxy.handle_host_oversize(head, tail, now);
                } else {
                    proxy.handle_upstream_oversize(head, tail, now);
                }
            }
            _ => {
                now += Duration::from_millis(u64::from(b.u16()) * 16);
                if proxy.poll_timeout().is_some_and(|due| due <= now) {
                    proxy.handle_timeout(now);
                }
                if b.one_in(16) {
                    proxy.handle_host_end(now);
                    perform(&mut proxy, &mut pending, &mut answered, &reads, &mut tool_names);
                    break;
                }
            }
        }
        perform(&mut proxy, &mut pending, &mut answered, &reads, &mut tool_names);
    }
    for (id, n) in &answered {
        let asked = sent.get(id).copied().unwrap_or(0);
        assert!(*n <= asked, "id {id} answered {n} times, asked {asked}");
    }
}

// ---------------------------------------------------------------------------------------------
// The completion tool's answer
// ---------------------------------------------------------------------------------------------

/// Any bytes as a server's `completion/complete` answer, rendered under two output caps: never a
/// panic; an error is `malformed_result` or `message_too_large` about the server; an output is one
/// JSON object within its cap, echoing the call, with at most 100 values, each a string of at most
/// 1,024 characters that sanitizing leaves as it is, `total` a non-negative integer and `hasMore` a
/// boolean when present, and the omitted values counted; the same answer renders the same twice.
pub fn check_complete_answer(data: &[u8]) {
    use mcplens::catalog::{Action, PairTraversal, RefreshConfig, Refresher, Want};
    use mcplens::tool::{self, CallConfig, CompleteConfig, ServerCall};

    let caps = r#"{"resources":{},"completions":{}}"#;
    let mut machine = Refresher::new(RefreshConfig::default(), 0);
    machine.attach_capabilities("fuzz", caps);
    machine.request("fuzz", Want::Refresh, Duration::ZERO).expect("an attached server");
    let Some(Action::Traverse { traversal, .. }) = machine.poll_action() else { panic!("no traversal") };
    let mut pair = PairTraversal::new(traversal, "fuzz", Some(caps), Limits::default(), "", Duration::ZERO);
    while let Some(request) = pair.poll_request() {
        let page = match request.method {
            "resources/list" => r#"{"resources":[]}"#,
            _ => r#"{"resourceTemplates":[{"uriTemplate":"docs://{project}/{page}","name":"pages"}]}"#,
        };
        pair.handle_outcome(Outcome::Page(page), Duration::ZERO).expect("a request in flight");
    }
    machine.handle_pair(pair, Duration::ZERO);
    let input =
        r#"{"server":"fuzz","uriTemplate":"docs://{project}/{page}","variable":"page","arguments":{"project":"p"}}"#;
    let text = lossy(data);
    for cap in [1_000, tool::complete::DEFAULT_OUTPUT_CHARS] {
        let config = CallConfig {
            complete: CompleteConfig { max_output_chars: cap, ..CompleteConfig::default() },
            ..CallConfig::default()
        };
        let call = ServerCall::new(machine.catalog(), tool::complete::NAME, input, &config, Duration::ZERO)
            .expect("a valid call");
        let first = call.finish(Outcome::Page(&text));
        assert_eq!(first, call.finish(Outcome::Page(&text)), "the same answer renders the same");
        let out = match first {
            Err(e) => {
                assert!(matches!(e.code().as_str(), "malformed_result" | "message_too_large"), "{}", e.code());
                assert_eq!(e.server(), Some("fuzz"));
                continue;
            }
            Ok(out) => out,
        };
        assert!(out.chars().count() <= cap, "over the cap: {}", out.len());
        let v: Value = serde_json::from_str(&out).expect("the output is JSON");
        assert_eq!((&v["server"], &v["variable"]), (&Value::from("fuzz"), &Value::from("page")));
        let values = v["values"].as_array().expect("values");
        assert!(values.len() <= tool::complete::MAX_VALUES);
        for value in values {
            let s = value.as_str().expect("a string value");
            assert!(s.chars().count() <= tool::complete::MAX_VALUE_CHARS);
            assert_eq!(sanitize::label(s), s, "a value sanitizing would change was kept");
        }
        if let Some(total) = v.get("total") {
            assert!(total.is_u64(), "total {total}");
        }
        if let Some(more) = v.get("hasMore") {
            assert!(more.is_boolean(), "hasMore {more}");
        }
        if let Some(omitted) = v.get("omitted") {
            assert!(omitted.as_object().expect("omitted").values().all(|n| n.as_u64().is_some_and(|n| n > 0)));
        }
    }
}
