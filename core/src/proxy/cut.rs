//! What can be read of a message dropped for its size: the driver keeps its first and last bytes
//! (at most [`KEPT`] each) and the proxy reads the JSON-RPC `id` and whether it has a `method`
//! from them, so the request the message belongs to still gets an answer.
//!
//! The head is read as the start of a JSON object: its top-level members up to where the head
//! ends (an `id` whose value is cut is not read). The tail is read for a last member `"id":…`
//! closing the object, as the TypeScript SDK writes its answers (`{"result":…,"jsonrpc":"2.0",
//! "id":7}`).

use serde_json::value::RawValue;

/// How many bytes of a dropped message's start and end a driver keeps.
pub const KEPT: usize = 4096;

/// What the kept bytes tell of a dropped message.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Cut {
    /// The top-level `id` (JSON text: a number or a string), when it could be read.
    pub id: Option<String>,
    /// The head shows a top-level `method` (a request or a notification); `false` when the head
    /// ended before one could be seen, or the message has none.
    pub method: bool,
}

/// Reads what `head` and `tail` (a message's first and last bytes) tell.
pub fn read(head: &[u8], tail: &[u8]) -> Cut {
    let mut cut = read_head(head);
    if cut.id.is_none() {
        cut.id = id_at_end(tail);
    }
    cut
}

/// The top-level members of a JSON object's first bytes.
fn read_head(head: &[u8]) -> Cut {
    let mut cut = Cut::default();
    let mut i = skip_ws(head, 0);
    if head.get(i) != Some(&b'{') {
        return cut;
    }
    i += 1;
    loop {
        i = skip_ws(head, i);
        let Some(key_end) = string_end(head, i) else { return cut };
        let key = &head[i..key_end];
        i = skip_ws(head, key_end);
        if head.get(i) != Some(&b':') {
            return cut;
        }
        i = skip_ws(head, i + 1);
        let Some(value_end) = value_end(head, i) else { return cut };
        match key {
            b"\"id\"" => cut.id = id_text(&head[i..value_end]),
            b"\"method\"" => cut.method = true,
            _ => {}
        }
        i = skip_ws(head, value_end);
        match head.get(i) {
            Some(b',') => i += 1,
            _ => return cut,
        }
    }
}

/// An `"id":…` member that closes the object at the end of `tail`.
fn id_at_end(tail: &[u8]) -> Option<String> {
    let mut end = tail.len();
    while end > 0 && tail[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    if end == 0 || tail[end - 1] != b'}' {
        return None;
    }
    end -= 1;
    while end > 0 && tail[end - 1].is_ascii_whitespace() {
        end -= 1;
    }
    // The value: a string (back to its opening quote) or a number.
    let start = if tail.get(end.checked_sub(1)?) == Some(&b'"') {
        let mut j = end - 1;
        loop {
            j = j.checked_sub(1)?;
            if tail[j] == b'"' && !escaped(tail, j) {
                break j;
            }
        }
    } else {
        let mut j = end;
        while j > 0 && matches!(tail[j - 1], b'0'..=b'9' | b'-' | b'+' | b'.' | b'e' | b'E') {
            j -= 1;
        }
        j
    };
    let value = &tail[start..end];
    let mut k = start;
    while k > 0 && tail[k - 1].is_ascii_whitespace() {
        k -= 1;
    }
    let before = tail[..k].strip_suffix(b":")?;
    let before = before.trim_ascii_end().strip_suffix(b"\"id\"")?;
    // The member follows another (`,`) or opens the object (`{`).
    if !matches!(before.trim_ascii_end().last(), Some(b',' | b'{')) {
        return None;
    }
    id_text(value)
}

/// Whether the quote at `at` is escaped (an odd run of backslashes before it).
fn escaped(s: &[u8], at: usize) -> bool {
    s[..at].iter().rev().take_while(|&&b| b == b'\\').count() % 2 == 1
}

/// A JSON-RPC id's text, when `value` is a whole JSON number or string.
fn id_text(value: &[u8]) -> Option<String> {
    let text = std::str::from_utf8(value).ok()?;
    let raw: &RawValue = serde_json::from_str(text).ok()?;
    matches!(text.as_bytes().first(), Some(b'"' | b'-' | b'0'..=b'9')).then(|| raw.get().to_owned())
}

fn skip_ws(s: &[u8], mut i: usize) -> usize {
    while s.get(i).is_some_and(u8::is_ascii_whitespace) {
        i += 1;
    }
    i
}

/// The end (exclusive) of the JSON string starting at `i`, if it ends within `s`.
fn string_end(s: &[u8], i: usize) -> Option<usize> {
    if s.get(i) != Some(&b'"') {
        return None;
    }
    let mut j = i + 1;
    loop {
        match s.get(j)? {
            b'\\' => j += 2,
            b'"' => return Some(j + 1),
            _ => j += 1,
        }
    }
}

/// The end (exclusive) of the JSON value starting at `i`, if it ends within `s`.
fn value_end(s: &[u8], i: usize) -> Option<usize> {
    match s.get(i)? {
        b'"' => string_end(s, i),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut j = i;
            loop {
                match s.get(j)? {
                    b'"' => {
                        j = string_end(s, j)?;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(j + 1);
                        }
                    }
                    _ => {}
                }
                j += 1;
            }
        }
        _ => {
            let mut j = i;
            while s.get(j).is_some_and(|b| !matches!(b, b',' | b'}' | b']') && !b.is_ascii_whitespace()) {
                j += 1;
            }
            // A scalar that runs to the end of the head may be cut.
            (j < s.len()).then_some(j)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(head: &str, tail: &str) -> Option<String> {
        read(head.as_bytes(), tail.as_bytes()).id
    }

    #[test]
    fn the_id_is_read_from_the_head_when_it_comes_first() {
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":7,"result":{"contents":[{"text":"aaaa"#, ""), Some("7".into()));
        assert_eq!(id(r#"{ "id" : "a\"b" , "result": "#, ""), Some(r#""a\"b""#.into()));
        assert_eq!(id(r#"{"result":{"x":[1,{"id":3}]},"id":-4,"#, ""), Some("-4".into()), "nested ids are not it");
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":12"#, ""), None, "a number cut at the head's end");
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":null,"x":1"#, ""), None, "null is no id to answer");
        assert_eq!(id(r#"{"jsonrpc":"2.0","id":{"a":1},"x":1"#, ""), None);
        let c = read(br#"{"jsonrpc":"2.0","id":5,"method":"sampling/createMessage","params":{"#, b"");
        assert_eq!((c.id.as_deref(), c.method), (Some("5"), true));
    }

    #[test]
    fn the_id_is_read_from_the_tail_when_it_comes_last() {
        assert_eq!(
            id(r#"{"result":{"contents":[{"text":"aaaa"#, r#"aaa"}]},"jsonrpc":"2.0","id":7}"#),
            Some("7".into())
        );
        assert_eq!(id("{\"result\":", "aa\"}]},\"id\" : \"x\\\"y\" }\n"), Some("\"x\\\"y\"".into()));
        assert_eq!(id(r#"{"result":"#, r#"aa","x":{"id":3}}"#), None, "a nested id is not it");
        assert_eq!(id(r#"{"result":"#, r#"aaaa"}"#), None);
        assert_eq!(id(r#"{"result":"#, r#"a"id":3}"#), None, "inside a string, not a member");
    }

    #[test]
    fn garbage_reads_as_nothing() {
        for junk in ["", "[1,2]", "not json", "{", r#"{"id""#, "\u{0}\u{1}"] {
            assert_eq!(read(junk.as_bytes(), junk.as_bytes()), Cut::default(), "{junk:?}");
        }
    }
}
