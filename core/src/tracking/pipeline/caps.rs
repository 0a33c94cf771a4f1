//! Payload caps (pure): `resources/read` contents summarized, binary content never kept, strings,
//! depth and breadth capped, every cut listed. The event-size cap lives in the builder, which sees
//! the whole event.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::event::{Truncation, TruncationReason};
use super::ids::hex;

/// Caps applied to each event. Defaults: 32 KiB per string, depth 10, breadth 100, 100 KiB per
/// event (serialized).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct PayloadLimits {
    /// Longest string kept whole, in UTF-8 bytes; longer ones are cut on a char boundary and end
    /// with a marker, the whole within this many bytes (default 32,768, at least 64).
    pub max_string_bytes: usize,
    /// Deepest nesting kept: an array or object deeper than this under `parameters`, `response`
    /// or `identity.data` becomes a marker string (default 10).
    pub max_depth: usize,
    /// Most entries kept per array or object; the rest are replaced by one marker entry (default 100).
    pub max_breadth: usize,
    /// Largest serialized event, in bytes (default 102,400, at least 4,096).
    pub max_event_bytes: usize,
}

impl Default for PayloadLimits {
    fn default() -> Self {
        PayloadLimits { max_string_bytes: 32 * 1024, max_depth: 10, max_breadth: 100, max_event_bytes: 100 * 1024 }
    }
}

/// Append one RFC 6901 reference token to a JSON Pointer.
pub fn push_pointer(path: &mut String, token: &str) {
    path.push('/');
    for c in token.chars() {
        match c {
            '~' => path.push_str("~0"),
            '/' => path.push_str("~1"),
            c => path.push(c),
        }
    }
}

/// Cut `s` to at most `max` bytes including the marker `…[truncated: N bytes]` (N = original
/// length). Returns the original length when cut.
pub fn truncate_string(s: &mut String, max: usize) -> Option<usize> {
    if s.len() <= max {
        return None;
    }
    // A string cut before (the worker cuts twice: with slack before redaction, exactly after)
    // keeps the size it had originally.
    let original = previous_cut(s).map_or(s.len(), |n| n.max(s.len()));
    let marker = format!("…[truncated: {original} bytes]");
    let mut keep = max.saturating_sub(marker.len());
    while keep > 0 && !s.is_char_boundary(keep) {
        keep -= 1;
    }
    s.truncate(keep);
    s.push_str(&marker);
    Some(original)
}

/// The length of `s` as a JSON string (quotes and escapes included, as serde_json writes it).
pub fn json_string_len(s: &str) -> usize {
    2 + s.bytes().map(json_byte_len).sum::<usize>()
}

fn json_byte_len(b: u8) -> usize {
    match b {
        b'"' | b'\\' | 0x08 | 0x0c | b'\n' | b'\r' | b'\t' => 2,
        0..=0x1f => 6,
        _ => 1,
    }
}

/// [`truncate_string`] by the serialized size: cut `s` so that it takes at most `max` bytes as a
/// JSON string, marker included. Returns the original length (in UTF-8 bytes) when cut.
pub fn truncate_json_string(s: &mut String, max: usize) -> Option<usize> {
    if json_string_len(s) <= max {
        return None;
    }
    let original = previous_cut(s).map_or(s.len(), |n| n.max(s.len()));
    let marker = format!("…[truncated: {original} bytes]");
    let budget = max.saturating_sub(2 + marker.len());
    let mut used = 0;
    let mut keep = 0;
    for (i, c) in s.char_indices() {
        let n = if c.is_ascii() { json_byte_len(c as u8) } else { c.len_utf8() };
        if used + n > budget {
            break;
        }
        used += n;
        keep = i + c.len_utf8();
    }
    s.truncate(keep);
    s.push_str(&marker);
    Some(original)
}

/// The original size named by a marker at the end of `s`, if any.
fn previous_cut(s: &str) -> Option<usize> {
    let body = s.strip_suffix(" bytes]")?;
    let at = body.rfind("…[truncated: ")?;
    body[at + "…[truncated: ".len()..].parse().ok()
}

/// Longest JSON Pointer kept in a `truncated` entry, in bytes; a longer one is cut on a char
/// boundary and ends with `…` (keys are payload text, and no other cap reaches them).
pub const MAX_PATH_BYTES: usize = 512;

/// `path` as a `truncated` entry keeps it (see [`MAX_PATH_BYTES`]).
pub fn cut_path(path: &str) -> String {
    if path.len() <= MAX_PATH_BYTES {
        return path.to_owned();
    }
    let mut keep = MAX_PATH_BYTES - '…'.len_utf8();
    while !path.is_char_boundary(keep) {
        keep -= 1;
    }
    let mut out = String::with_capacity(MAX_PATH_BYTES);
    out.push_str(&path[..keep]);
    out.push('…');
    out
}

/// Whether [`cap_value`] would cut anything (a walk without building paths).
pub fn needs_cap(v: &Value, depth: usize, limits: &PayloadLimits) -> bool {
    match v {
        Value::String(s) => s.len() > limits.max_string_bytes,
        Value::Array(a) if !a.is_empty() => {
            depth >= limits.max_depth
                || a.len() > limits.max_breadth
                || a.iter().any(|x| needs_cap(x, depth + 1, limits))
        }
        Value::Object(m) if !m.is_empty() => {
            depth >= limits.max_depth
                || m.len() > limits.max_breadth
                || m.values().any(|x| needs_cap(x, depth + 1, limits))
        }
        _ => false,
    }
}

/// The count of a breadth marker (`[truncated: N more items]` / `[truncated: N more keys]`).
fn marker_count(v: &Value, unit: &str) -> Option<usize> {
    let s = v.as_str()?.strip_prefix("[truncated: ")?;
    s.strip_suffix(unit)?.parse().ok()
}

/// Apply string, depth and breadth caps to `v` at `path` (depth of `v` = `depth`). `earlier`: the
/// cuts of an earlier pass over the same value; where it cut breadth, the marker it left stands
/// for its count of entries (not for one) and is replaced by the new marker.
pub fn cap_value(
    v: &mut Value,
    path: &mut String,
    depth: usize,
    limits: &PayloadLimits,
    earlier: &[Truncation],
    cuts: &mut Vec<Truncation>,
) {
    let cut_here = |path: &str| {
        let p = cut_path(path);
        earlier.iter().any(|c| c.reason == TruncationReason::Breadth && c.path == p)
    };
    match v {
        Value::String(s) => {
            if let Some(original) = truncate_string(s, limits.max_string_bytes) {
                cuts.push(Truncation {
                    path: cut_path(path),
                    reason: TruncationReason::StringLength,
                    original_bytes: Some(original as u64),
                });
            }
        }
        Value::Array(a) if !a.is_empty() => {
            if depth >= limits.max_depth {
                *v = Value::String(format!("[truncated: nested deeper than {}]", limits.max_depth));
                cuts.push(Truncation { path: cut_path(path), reason: TruncationReason::Depth, original_bytes: None });
                return;
            }
            if a.len() > limits.max_breadth {
                let mut more = a.len() - limits.max_breadth;
                if let Some(n) = a.last().and_then(|m| marker_count(m, " more items]")).filter(|_| cut_here(path)) {
                    more = more - 1 + n;
                }
                a.truncate(limits.max_breadth);
                a.push(Value::String(format!("[truncated: {more} more items]")));
                cuts.push(Truncation { path: cut_path(path), reason: TruncationReason::Breadth, original_bytes: None });
            }
            for (i, item) in a.iter_mut().enumerate() {
                let len = path.len();
                let _ = write!(path, "/{i}");
                cap_value(item, path, depth + 1, limits, earlier, cuts);
                path.truncate(len);
            }
        }
        Value::Object(m) if !m.is_empty() => {
            if depth >= limits.max_depth {
                *v = Value::String(format!("[truncated: nested deeper than {}]", limits.max_depth));
                cuts.push(Truncation { path: cut_path(path), reason: TruncationReason::Depth, original_bytes: None });
                return;
            }
            if m.len() > limits.max_breadth {
                let earlier_n = m.get("…").and_then(|x| marker_count(x, " more keys]")).filter(|_| cut_here(path));
                let total = match earlier_n {
                    Some(n) => {
                        m.remove("…");
                        m.len() + n
                    }
                    None => m.len(),
                };
                if m.len() > limits.max_breadth || earlier_n.is_none() {
                    // A key of the payload's own named like the marker is one of the cut ones.
                    let kept: Map<String, Value> =
                        std::mem::take(m).into_iter().filter(|(k, _)| k != "…").take(limits.max_breadth).collect();
                    *m = kept;
                    cuts.push(Truncation {
                        path: cut_path(path),
                        reason: TruncationReason::Breadth,
                        original_bytes: None,
                    });
                }
                let more = total - m.len();
                m.insert("…".to_owned(), Value::String(format!("[truncated: {more} more keys]")));
            }
            for (k, item) in m.iter_mut() {
                // A marker is a short string: the walk leaves it as it is.
                let len = path.len();
                push_pointer(path, k);
                cap_value(item, path, depth + 1, limits, earlier, cuts);
                path.truncate(len);
            }
        }
        _ => {}
    }
}

/// Streaming base64 (standard or URL-safe alphabet, padding and whitespace allowed) into SHA-256.
/// Returns `(decoded bytes, sha256 hex)`, or `None` when the text is not base64.
pub fn base64_digest(text: &str) -> Option<(u64, String)> {
    fn val(c: u8) -> Option<u32> {
        Some(match c {
            b'A'..=b'Z' => u32::from(c - b'A'),
            b'a'..=b'z' => u32::from(c - b'a') + 26,
            b'0'..=b'9' => u32::from(c - b'0') + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        })
    }
    let mut h = Sha256::new();
    let mut buf = [0u8; 3 * 1024];
    let mut fill = 0;
    let mut acc: u32 = 0;
    let mut bits = 0;
    let mut total: u64 = 0;
    let mut padding = false;
    for &c in text.as_bytes() {
        if c.is_ascii_whitespace() {
            continue;
        }
        if c == b'=' {
            padding = true;
            continue;
        }
        if padding {
            return None; // data after padding
        }
        acc = (acc << 6) | val(c)?;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            buf[fill] = (acc >> bits) as u8;
            acc &= (1 << bits) - 1;
            fill += 1;
            if fill == buf.len() {
                h.update(&buf[..fill]);
                total += fill as u64;
                fill = 0;
            }
        }
    }
    h.update(&buf[..fill]);
    total += fill as u64;
    Some((total, hex(&h.finalize())))
}

fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// The summary of binary data: `{<prefix>Bytes, sha256}`; text that is not base64 is hashed as
/// text and flagged `invalidBase64`.
fn binary_summary(into: &mut Map<String, Value>, key_bytes: &str, data: &str) {
    match base64_digest(data) {
        Some((n, sha)) => {
            into.insert(key_bytes.to_owned(), Value::from(n));
            into.insert("sha256".to_owned(), Value::String(sha));
        }
        None => {
            into.insert(key_bytes.to_owned(), Value::from(data.len() as u64));
            into.insert("sha256".to_owned(), Value::String(sha256_hex(data.as_bytes())));
            into.insert("invalidBase64".to_owned(), Value::Bool(true));
        }
    }
}

/// `resources/read` result → `{"contents": [{uri, mimeType, textBytes | blobBytes, sha256, text?}]}`.
/// Text is kept only when `keep_text`; blobs never. Other result keys (`_meta`, …) are dropped.
/// A result without a `contents` array is returned through [`strip_binary`] instead.
pub fn summarize_read_result(result: Value, keep_text: bool) -> Value {
    let Value::Object(mut m) = result else {
        return strip_binary(result);
    };
    let Some(Value::Array(contents)) = m.remove("contents") else {
        return strip_binary(Value::Object(m));
    };
    let mut out = Vec::with_capacity(contents.len());
    for c in contents {
        let Value::Object(c) = c else {
            out.push(strip_binary(c));
            continue;
        };
        let mut s = Map::new();
        if let Some(uri) = c.get("uri") {
            s.insert("uri".to_owned(), uri.clone());
        }
        if let Some(mime) = c.get("mimeType") {
            s.insert("mimeType".to_owned(), mime.clone());
        }
        match (c.get("text"), c.get("blob")) {
            (Some(Value::String(text)), _) => {
                s.insert("textBytes".to_owned(), Value::from(text.len() as u64));
                s.insert("sha256".to_owned(), Value::String(sha256_hex(text.as_bytes())));
                if keep_text {
                    s.insert("text".to_owned(), Value::String(text.clone()));
                }
            }
            (_, Some(Value::String(blob))) => binary_summary(&mut s, "blobBytes", blob),
            _ => {}
        }
        out.push(Value::Object(s));
    }
    let mut r = Map::new();
    r.insert("contents".to_owned(), Value::Array(out));
    Value::Object(r)
}

/// Replace binary payloads anywhere in a result: any string `blob` (embedded resources) becomes
/// `{blobBytes, sha256}`, and the `data` of `image`/`audio` content blocks becomes
/// `{dataBytes, sha256}`.
pub fn strip_binary(mut v: Value) -> Value {
    fn walk(v: &mut Value) {
        match v {
            Value::Array(a) => a.iter_mut().for_each(walk),
            Value::Object(m) => {
                if let Some(Value::String(blob)) = m.remove("blob") {
                    binary_summary(m, "blobBytes", &blob);
                }
                let media = matches!(m.get("type").and_then(Value::as_str), Some("image" | "audio"));
                if media {
                    if let Some(Value::String(data)) = m.remove("data") {
                        binary_summary(m, "dataBytes", &data);
                    }
                }
                m.values_mut().for_each(walk);
            }
            _ => {}
        }
    }
    walk(&mut v);
    v
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn string_cut_keeps_marker_within_cap() {
        let mut s = "é".repeat(100); // 200 bytes
        let n = truncate_string(&mut s, 64).unwrap();
        assert_eq!(n, 200);
        assert!(s.len() <= 64, "{}", s.len());
        assert!(s.ends_with("…[truncated: 200 bytes]"));
        // Cutting again keeps the original size.
        let n = truncate_string(&mut s, 40).unwrap();
        assert_eq!(n, 200);
        assert!(s.len() <= 40 && s.ends_with("…[truncated: 200 bytes]"), "{s}");
        let mut short = "abc".to_owned();
        assert_eq!(truncate_string(&mut short, 64), None);
    }

    #[test]
    fn depth_and_breadth() {
        let limits = PayloadLimits { max_depth: 2, max_breadth: 3, ..PayloadLimits::default() };
        let mut v = json!({"a": {"b": {"c": 1}}, "list": [1, 2, 3, 4, 5], "x/y": {"z": []}});
        let mut cuts = Vec::new();
        cap_value(&mut v, &mut "/parameters".to_owned(), 0, &limits, &[], &mut cuts);
        assert_eq!(
            v,
            json!({"a": {"b": "[truncated: nested deeper than 2]"}, "list": [1, 2, 3, "[truncated: 2 more items]"], "x/y": {"z": []}})
        );
        let paths: Vec<_> = cuts.iter().map(|c| (c.path.as_str(), c.reason)).collect();
        assert_eq!(
            paths,
            vec![("/parameters/a/b", TruncationReason::Depth), ("/parameters/list", TruncationReason::Breadth)]
        );
        let mut wide = Value::Object((0..5).map(|i| (format!("k{i}"), json!(i))).collect());
        let mut cuts = Vec::new();
        cap_value(&mut wide, &mut String::new(), 0, &limits, &[], &mut cuts);
        assert_eq!(wide, json!({"k0": 0, "k1": 1, "k2": 2, "…": "[truncated: 2 more keys]"}));
    }

    #[test]
    fn base64() {
        assert_eq!(base64_digest("aGVsbG8=").unwrap(), (5, sha256_hex(b"hello")));
        assert_eq!(base64_digest("aGVs\nbG8").unwrap(), (5, sha256_hex(b"hello")));
        assert_eq!(base64_digest("").unwrap(), (0, sha256_hex(b"")));
        assert!(base64_digest("not base64!").is_none());
    }

    #[test]
    fn read_results() {
        let r = json!({"contents": [
            {"uri": "file:///a", "mimeType": "text/plain", "text": "hello"},
            {"uri": "file:///b", "blob": "aGVsbG8="}
        ], "_meta": {"x": 1}});
        assert_eq!(
            summarize_read_result(r.clone(), false),
            json!({"contents": [
                {"uri": "file:///a", "mimeType": "text/plain", "textBytes": 5, "sha256": sha256_hex(b"hello")},
                {"uri": "file:///b", "blobBytes": 5, "sha256": sha256_hex(b"hello")}
            ]})
        );
        let kept = summarize_read_result(r, true);
        assert_eq!(kept["contents"][0]["text"], "hello");
        assert!(kept["contents"][1].get("blob").is_none());
    }

    #[test]
    fn binary_in_tool_results() {
        let r = json!({"content": [
            {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
            {"type": "resource", "resource": {"uri": "x:y", "blob": "aGVsbG8="}},
            {"type": "text", "text": "data"}
        ]});
        let s = strip_binary(r);
        assert_eq!(
            s["content"][0],
            json!({"type": "image", "mimeType": "image/png", "dataBytes": 5, "sha256": sha256_hex(b"hello")})
        );
        assert_eq!(s["content"][1]["resource"], json!({"uri": "x:y", "blobBytes": 5, "sha256": sha256_hex(b"hello")}));
        assert_eq!(s["content"][2], json!({"type": "text", "text": "data"}));
    }
}
