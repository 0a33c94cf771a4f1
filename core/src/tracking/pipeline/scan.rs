//! The builder's fast path (pure): one pass over a payload's JSON text that decides whether the
//! text can be kept as it is, because the full path (parse → summarize → cap → redact →
//! re-serialize) would change nothing in it, and reads what the builder needs from it
//! (`name`, `uri`, `_meta.traceparent` of params; `isError` of a result).
//!
//! The pass is conservative: it answers "keep" only for a strict, escape-free subset of JSON
//! (valid as serde_json reads it), within the depth, breadth and string caps, with no key that
//! names a secret, no string a built-in redaction rule could change and, for a result, no binary
//! content; on anything else (an escape, an exponent, a duplicate peeked key, a peeked key of an
//! unexpected type, …) it says no and the full path decides. A test checks both paths give the
//! same events.

use super::caps::PayloadLimits;
use super::event::find_stop;
use super::redact::{clean_json_string, is_sensitive_key};

/// What [`scan`] read from a payload it found clean.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Scanned<'a> {
    /// The text without the whitespace around it (what the event keeps).
    pub raw: &'a str,
    /// Params: the top-level `name` string.
    pub name: Option<&'a str>,
    /// Params: the top-level `uri` string.
    pub uri: Option<&'a str>,
    /// Params: `_meta.traceparent`.
    pub traceparent: Option<&'a str>,
    /// Result: the top-level `isError` (`null` reads as absent).
    pub is_error: Option<bool>,
}

/// What kind of payload is scanned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// Request `params`: peek `name`, `uri`, `_meta.traceparent`.
    Params,
    /// A result: peek `isError`; binary content (`blob`, `image`, `audio`) is not clean.
    Result,
}

/// Scan `text`; `Some` when it can be kept as it is (see the module docs). `redact`: the
/// built-in redaction rules are on.
pub(crate) fn scan<'a>(text: &'a str, kind: Kind, limits: &PayloadLimits, redact: bool) -> Option<Scanned<'a>> {
    if text.len() > limits.max_string_bytes {
        return None;
    }
    let mut s =
        Scanner { text, b: text.as_bytes(), i: 0, limits, redact, kind, meta_seen: false, out: Scanned::default() };
    s.outer_ws();
    let start = s.i;
    if s.b.get(s.i) != Some(&b'{') {
        return None;
    }
    s.object(0, Level::Top)?;
    let end = s.i;
    s.outer_ws();
    if s.i != s.b.len() {
        return None;
    }
    s.out.raw = &text[start..end];
    Some(s.out)
}

/// Deepest nesting the scan follows (deeper payloads take the full path).
const MAX_NESTING: usize = 64;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Level {
    Top,
    Meta,
    Inner,
}

struct Scanner<'a, 'l> {
    text: &'a str,
    b: &'a [u8],
    i: usize,
    limits: &'l PayloadLimits,
    redact: bool,
    kind: Kind,
    meta_seen: bool,
    out: Scanned<'a>,
}

/// A scalar value, for the peeked keys.
enum Val<'a> {
    Str(&'a str),
    Bool(bool),
    Null,
    Other,
}

fn set_once<T>(slot: &mut Option<T>, v: T) -> Option<()> {
    if slot.is_some() {
        return None; // a duplicate key: the full path decides which one counts
    }
    *slot = Some(v);
    Some(())
}

impl<'a> Scanner<'a, '_> {
    /// Whitespace around the payload (not kept).
    fn outer_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    /// Whitespace inside the kept text: spaces only, so that a kept payload never splits an event
    /// line (a tab, newline or carriage return takes the full path, which writes compact JSON).
    fn ws(&mut self) {
        while let Some(b' ') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn byte(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// At `"`: the contents of an escape-free string, the position after its closing quote.
    fn string(&mut self) -> Option<&'a str> {
        let start = self.i + 1;
        let j = find_stop(self.b, start);
        if self.b.get(j) != Some(&b'"') {
            return None;
        }
        self.i = j + 1;
        // `"` is ASCII, so both ends are char boundaries.
        self.text.get(start..j)
    }

    /// A string value: clean for redaction (checked in the pass that finds its end) and
    /// (results) not a binary marker.
    fn string_value(&mut self) -> Option<&'a str> {
        let s = if self.redact {
            let start = self.i + 1;
            let j = clean_json_string(self.b, start)?;
            if self.b.get(j) != Some(&b'"') {
                return None;
            }
            self.i = j + 1;
            self.text.get(start..j)?
        } else {
            self.string()?
        };
        if self.kind == Kind::Result && is_binary_marker(s) {
            return None;
        }
        Some(s)
    }

    fn literal(&mut self, lit: &[u8]) -> Option<()> {
        if self.b.get(self.i..self.i + lit.len()) == Some(lit) {
            self.i += lit.len();
            Some(())
        } else {
            None
        }
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?`; exponents and very long numbers take the full path (which
    /// rejects numbers out of range).
    fn number(&mut self) -> Option<()> {
        let start = self.i;
        if self.byte() == Some(b'-') {
            self.i += 1;
        }
        match self.byte()? {
            b'0' => self.i += 1,
            b'1'..=b'9' => self.digits(),
            _ => return None,
        }
        if self.byte() == Some(b'.') {
            self.i += 1;
            let d = self.i;
            self.digits();
            if self.i == d {
                return None;
            }
        }
        if matches!(self.byte(), Some(b'e' | b'E')) || self.i - start > 20 {
            return None;
        }
        Some(())
    }

    fn digits(&mut self) {
        while let Some(b'0'..=b'9') = self.b.get(self.i) {
            self.i += 1;
        }
    }

    fn value(&mut self, depth: usize) -> Option<Val<'a>> {
        Some(match self.byte()? {
            b'"' => Val::Str(self.string_value()?),
            b'{' => {
                self.object(depth, Level::Inner)?;
                Val::Other
            }
            b'[' => {
                self.array(depth)?;
                Val::Other
            }
            b't' => {
                self.literal(b"true")?;
                Val::Bool(true)
            }
            b'f' => {
                self.literal(b"false")?;
                Val::Bool(false)
            }
            b'n' => {
                self.literal(b"null")?;
                Val::Null
            }
            _ => {
                self.number()?;
                Val::Other
            }
        })
    }

    /// A container opens at nesting `depth` (the payload itself is at 0, as in the caps).
    fn open(&mut self, depth: usize) -> Option<()> {
        if depth >= self.limits.max_depth || depth >= MAX_NESTING {
            return None;
        }
        self.i += 1;
        self.ws();
        Some(())
    }

    fn array(&mut self, depth: usize) -> Option<()> {
        self.open(depth)?;
        if self.byte() == Some(b']') {
            self.i += 1;
            return Some(());
        }
        let mut n = 0;
        loop {
            n += 1;
            if n > self.limits.max_breadth {
                return None;
            }
            self.value(depth + 1)?;
            self.ws();
            match self.byte()? {
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                b']' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    fn object(&mut self, depth: usize, level: Level) -> Option<()> {
        self.open(depth)?;
        if self.byte() == Some(b'}') {
            self.i += 1;
            return Some(());
        }
        let mut n = 0;
        loop {
            n += 1;
            if n > self.limits.max_breadth || self.byte()? != b'"' {
                return None;
            }
            let key = self.string()?;
            if self.redact && is_sensitive_key(key) {
                return None;
            }
            if self.kind == Kind::Result && is_binary_marker(key) {
                return None;
            }
            self.ws();
            if self.byte()? != b':' {
                return None;
            }
            self.i += 1;
            self.ws();
            self.member(depth, level, key)?;
            self.ws();
            match self.byte()? {
                b',' => {
                    self.i += 1;
                    self.ws();
                }
                b'}' => {
                    self.i += 1;
                    return Some(());
                }
                _ => return None,
            }
        }
    }

    /// One member's value; peeked keys must have the type the builder reads (else the full path).
    fn member(&mut self, depth: usize, level: Level, key: &str) -> Option<()> {
        match (level, self.kind, key) {
            (Level::Top, Kind::Params, "name") => match self.value(depth + 1)? {
                Val::Str(s) => set_once(&mut self.out.name, s),
                _ => None,
            },
            (Level::Top, Kind::Params, "uri") => match self.value(depth + 1)? {
                Val::Str(s) => set_once(&mut self.out.uri, s),
                _ => None,
            },
            (Level::Top, Kind::Params, "_meta") => {
                if self.byte()? != b'{' || self.meta_seen {
                    return None;
                }
                self.meta_seen = true;
                self.object(depth + 1, Level::Meta)
            }
            (Level::Meta, _, "traceparent") => match self.value(depth + 1)? {
                Val::Str(s) => set_once(&mut self.out.traceparent, s),
                _ => None,
            },
            // A 2026-07-28 request's revision and client (SEP-2575): read by the full path.
            (Level::Meta, _, k) if k.starts_with("io.modelcontextprotocol/") => None,
            // Cursors are hidden by the full path.
            (Level::Top, Kind::Params, "cursor") | (Level::Top, Kind::Result, "nextCursor") => None,
            (Level::Top, Kind::Result, "isError") => match self.value(depth + 1)? {
                Val::Bool(v) => set_once(&mut self.out.is_error, v),
                Val::Null if self.out.is_error.is_none() => Some(()),
                _ => None,
            },
            _ => self.value(depth + 1).map(|_| ()),
        }
    }
}

/// The strings that mark binary content in a result (`blob`, `image`, `audio`).
fn is_binary_marker(s: &str) -> bool {
    matches!(s, "blob" | "image" | "audio")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> PayloadLimits {
        PayloadLimits::default()
    }

    fn params(t: &str) -> Option<Scanned<'_>> {
        scan(t, Kind::Params, &limits(), true)
    }

    fn result(t: &str) -> Option<Scanned<'_>> {
        scan(t, Kind::Result, &limits(), true)
    }

    #[test]
    fn peeks() {
        let s = params(r#" {"name":"echo","uri":"note://1","_meta":{"traceparent":"00-x","a":[1,2.5,-0]}} "#).unwrap();
        assert_eq!(s.raw, r#"{"name":"echo","uri":"note://1","_meta":{"traceparent":"00-x","a":[1,2.5,-0]}}"#);
        assert_eq!((s.name, s.uri, s.traceparent), (Some("echo"), Some("note://1"), Some("00-x")));
        assert_eq!(result(r#"{"content":[],"isError":false}"#).unwrap().is_error, Some(false));
        assert_eq!(result(r#"{"content":[],"isError":true}"#).unwrap().is_error, Some(true));
        assert_eq!(result(r#"{"isError":null}"#).unwrap().is_error, None);
        // A result's `name` is not peeked, so its type does not matter.
        assert!(result(r#"{"name":5}"#).is_some());
    }

    #[test]
    fn full_path_cases() {
        for t in [
            r#"{"name":5}"#,
            r#"{"name":"a","name":"b"}"#,
            r#"{"_meta":[]}"#,
            r#"{"_meta":{"traceparent":1}}"#,
            r#"{"a":"\n"}"#,
            r#"{"a":1e5}"#,
            r#"{"a":01}"#,
            r#"{"a":1.}"#,
            r#"{"a":-}"#,
            r#"{"a":tru}"#,
            r#"{"a":1,}"#,
            r#"{"a" 1}"#,
            r#"{"a":1} x"#,
            r#"[1,2]"#,
            r#""odd""#,
            "{\"a\":\"tab\there\"}",
            r#"{"password":"p"}"#,
            r#"{"a":"see https://h/x?token=1"}"#,
            r#"{"a":"Bearer abcdefghijkl"}"#,
            r#"{"a":123456789012345678901}"#,
        ] {
            assert!(params(t).is_none(), "{t}");
        }
        for t in [r#"{"type":"image"}"#, r#"{"blob":"x"}"#, r#"{"isError":"yes"}"#, r#"{"isError":1}"#] {
            assert!(result(t).is_none(), "{t}");
        }
        let deep = r#"{"a":{"b":{"c":{"d":{"e":{"f":{"g":{"h":{"i":{"j":{"k":1}}}}}}}}}}}"#;
        assert!(params(deep).is_none());
        let wide = format!("{{\"l\":[{}]}}", (0..101).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
        assert!(params(&wide).is_none());
        let ok = format!("{{\"l\":[{}]}}", (0..100).map(|i| i.to_string()).collect::<Vec<_>>().join(","));
        assert!(params(&ok).is_some());
    }

    #[test]
    fn stop_bytes() {
        // Past 64: a stop in the first and in a later 32-byte step, and in the 8-byte tail.
        for n in 0..100 {
            for c in 0u8..=255 {
                let mut v = vec![b'a'; n];
                v.push(c);
                v.extend_from_slice(b"zzzzzzzzzz");
                let want = if c < 0x20 || c == b'"' || c == b'\\' { n } else { v.len() };
                assert_eq!(find_stop(&v, 0), want, "{n} {c}");
                assert_eq!(find_stop(&v, n.min(3)), want.max(n.min(3)));
            }
        }
        assert_eq!(find_stop(b"", 0), 0);
        // Several candidates in one word: the first counts.
        for a in 0u8..=255 {
            for pos in 0..47 {
                let mut v = *b"abcdefghijklmnopabcdefghijklmnopabcdefghijklmnop";
                v[pos] = a;
                v[pos + 1] = b'"';
                let first = if a < 0x20 || a == b'"' || a == b'\\' { pos } else { pos + 1 };
                assert_eq!(find_stop(&v, 0), first, "{a} {pos}");
            }
        }
    }

    #[test]
    fn accepts_only_what_serde_json_reads() {
        let cases = [
            r#"{}"#,
            r#"{ }"#,
            r#"{"a":[]}"#,
            r#"{"a":[ ]}"#,
            r#"{"a":{"b":[true,false,null,0,-1,2.25,"é"]}}"#,
            "{\"a\" :\n\t1 , \"b\":\r\n2}",
            r#"{"a":"x"}}"#,
            r#"{"a":[1 2]}"#,
            r#"{"a":-01}"#,
            r#"{"a":.5}"#,
            r#"{"a":+1}"#,
            r#"{a:1}"#,
            r#"{"a":nul}"#,
            r#"{"a":"x}"#,
            r#"{"#,
            "",
        ];
        for t in cases {
            let ours = params(t).is_some();
            let serde = serde_json::from_str::<serde_json::Value>(t).is_ok();
            assert!(!ours || serde, "{t}: accepted but not JSON");
        }
    }
}
