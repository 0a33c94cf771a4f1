//! `ReadMcpResourceTool`: the model reads one resource of a connected server, bounded.
//!
//! Sans-IO, like the [`Pager`](crate::Pager): [`ReadCall::new`] validates the model's input
//! against the catalog and the [`ReadConfig`]; the host sends [`ReadCall::METHOD`] with
//! [`params_json`](ReadCall::params_json) over the server's connection, waits at most
//! [`remaining`](ReadCall::remaining), and hands what happened to [`ReadCall::finish`], which
//! renders the model's output or the tool error:
//!
//! ```text
//! {"truncated":{"textChars":1048576,"shownChars":99520,"omittedContents":0,"maxOutputChars":100000},"server":"docs","uri":"file:///a","contents":[{"uri":"file:///a","mimeType":"text/plain","textChars":1048576},{"uri":"file:///logo","mimeType":"image/png","blobBytes":1234}]}
//! --- content 1 text (99520 of 1048576 characters) ---
//! the text, as the server wrote it…
//! ```
//!
//! One header line of compact JSON — the truncation note first, then what was read and every
//! content's size — and each text under its own separator line, with its line breaks: what a host
//! keeps of a long tool result (its first characters, or its first lines) says how much there is
//! and starts with the document (`docs/tools.md`).
//!
//! - The URI must be one the server listed, or fit one of its listed templates
//!   ([`Catalog::match_uri`](Catalog::match_uri) over that server's templates), unless
//!   [`ReadConfig::any_uri`]; a match that gave up is `match_limit`. Refusals name the rule and
//!   the server, never the URI.
//! - Text is sanitized as the catalog's descriptions are (invisible, control and bidi characters
//!   removed and counted in `removedChars`; `\n` and `\t` kept) but without the 2,048-character
//!   field cap: only the output cap applies. Content URIs and MIME types are labels (capped).
//! - `_meta` and every other field is dropped; a blob is summarized by its decoded size, never
//!   its base64.
//! - The output is at most [`ReadConfig::max_output_chars`] characters: past it, the summaries
//!   take at most half the cap (`moreContents` counts the rest), text is cut in content order and
//!   later texts omitted, and `truncated` says how much was shown.
//! - A JSON-RPC error keeps only its code (`-32002` is named: resource not found); a read past
//!   [`ReadConfig::timeout`] is `deadline`.

use std::borrow::Cow;
use std::time::Duration;

use serde::ser::{SerializeMap, Serializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{ToolError, ToolSpec, MAX_OUTPUT_CHARS};
use crate::catalog::{Catalog, ServerStatus, Status};
use crate::discovery::Outcome;
use crate::sanitize;
use crate::template::MAX_URI_BYTES;

/// The read tool's name.
pub const NAME: &str = crate::catalog::READ_RESOURCE_TOOL;

/// The read tool's description, shown to the model.
pub const DESCRIPTION: &str = "Reads one resource of a connected MCP server. Give the server's name as \"server\" \
and the resource's URI as \"uri\": a URI from the resource listing, or one built by filling in a resource template \
of the same server (from the template listing). Returns a first line of JSON describing the resource's contents \
(binary contents by MIME type and size only; \"truncated\" first when long contents were cut to the output limit), \
then each text content as written, after a line \"--- content N text (S of T characters) ---\".";

/// How long a read may take by default.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The smallest output cap accepted.
pub const MIN_OUTPUT_CHARS: usize = 1_000;

/// The largest output cap accepted.
pub const MAX_OUTPUT_CHARS_LIMIT: usize = 10_000_000;

/// The longest timeout accepted.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(600);

/// The JSON-RPC code the MCP specification gives "resource not found".
const RESOURCE_NOT_FOUND: i64 = -32002;

/// The read tool's settings.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields, default)]
pub struct ReadConfig {
    /// Read any URI the model names on a server of the catalog, not only listed ones or ones that
    /// fit a listed template (default `false`).
    pub any_uri: bool,
    /// The cap on the rendered output, in Unicode scalar values (default 100,000).
    pub max_output_chars: usize,
    /// How long the read may take (default 30 s).
    #[serde(rename = "timeoutMs", with = "crate::millis")]
    pub timeout: Duration,
}

impl Default for ReadConfig {
    fn default() -> ReadConfig {
        ReadConfig { any_uri: false, max_output_chars: MAX_OUTPUT_CHARS, timeout: DEFAULT_TIMEOUT }
    }
}

impl ReadConfig {
    /// Checks the bounds: `maxOutputChars` from 1,000 to 10,000,000, `timeoutMs` from 1 to 600,000.
    pub fn validate(&self) -> Result<(), ToolError> {
        let reason = if !(MIN_OUTPUT_CHARS..=MAX_OUTPUT_CHARS_LIMIT).contains(&self.max_output_chars) {
            "maxOutputChars must be from 1000 to 10000000"
        } else if self.timeout.is_zero() || self.timeout > MAX_TIMEOUT {
            "timeoutMs must be from 1 to 600000"
        } else {
            return Ok(());
        };
        Err(ToolError::InvalidArgument { reason: format!("read settings: {reason}") })
    }

    /// Parses and checks settings from JSON text (`{"anyUri","maxOutputChars","timeoutMs"}`, each
    /// optional; `null` means the defaults).
    pub fn from_json(text: &str) -> Result<ReadConfig, ToolError> {
        let expected = "read settings: expected {anyUri?: boolean, maxOutputChars?: integer, timeoutMs?: integer}";
        let config: ReadConfig = super::common::settings_from_json(text, expected)?;
        config.validate()?;
        Ok(config)
    }
}

/// The read tool's spec.
pub fn spec() -> ToolSpec {
    let input_schema = serde_json::json!({
        "type": "object",
        "properties": {
            "server": {"type": "string", "description": "The server to read from, as the listings name it."},
            "uri": {"type": "string", "description": "The resource's URI: listed, or a filled-in template of that server."}
        },
        "required": ["server", "uri"],
        "additionalProperties": false
    });
    ToolSpec::new(NAME, DESCRIPTION, input_schema, "Read an MCP resource", true)
}

/// The read tool's input.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ReadInput {
    /// The server to read from.
    pub server: String,
    /// The URI to read.
    pub uri: String,
}

impl ReadInput {
    /// Parses the model's input (JSON text).
    pub fn from_json(text: &str) -> Result<ReadInput, ToolError> {
        let v: Value = serde_json::from_str(text).map_err(|_| invalid("the input is not a JSON object"))?;
        ReadInput::from_value(v)
    }

    /// Parses the model's input (a JSON value): an object with the strings `server` and `uri`.
    pub fn from_value(v: Value) -> Result<ReadInput, ToolError> {
        let Some(obj) = v.as_object() else { return Err(invalid("the input is not an object")) };
        for key in ["server", "uri"] {
            match obj.get(key) {
                Some(Value::String(_)) => {}
                None | Some(Value::Null) => return Err(invalid(&format!("\"{key}\" is required"))),
                Some(_) => return Err(invalid(&format!("\"{key}\" must be a string"))),
            }
        }
        if let Some(k) = obj.keys().find(|k| !matches!(k.as_str(), "server" | "uri")) {
            let k: String = sanitize::label(k).chars().take(64).collect();
            return Err(invalid(&format!("unknown input field \"{k}\"")));
        }
        serde_json::from_value(v).map_err(|_| invalid("the input is not an object"))
    }
}

fn invalid(reason: &str) -> ToolError {
    ToolError::InvalidArgument { reason: reason.to_owned() }
}

/// One read, validated: what the host sends, and the rendering of what came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReadCall {
    server: String,
    uri: String,
    config: ReadConfig,
    deadline: Duration,
}

impl ReadCall {
    /// The JSON-RPC method the host sends.
    pub const METHOD: &'static str = crate::protocol::RESOURCES_READ;

    /// Validates `input` against `catalog` at `now` (the host's monotonic clock): the server is in
    /// the catalog; the URI is at most 8,192 bytes, has no control, whitespace, invisible or U+FFFD
    /// character (the catalog's rule for URIs), and —
    /// unless `config.any_uri` — is a resource the server listed or fits one of its templates.
    pub fn new(
        catalog: &Catalog,
        input: &ReadInput,
        config: &ReadConfig,
        now: Duration,
    ) -> Result<ReadCall, ToolError> {
        config.validate()?;
        let server = input.server.as_str();
        catalog.status(server, now).map_err(ToolError::UnknownServer)?;
        let uri = input.uri.as_str();
        if uri.is_empty() || uri.len() > MAX_URI_BYTES {
            return Err(invalid("\"uri\" must be from 1 to 8192 bytes"));
        }
        if uri.chars().any(sanitize::forbidden_in_uri) {
            return Err(invalid("\"uri\" holds a control, whitespace, invisible or U+FFFD character"));
        }
        if !config.any_uri && !catalog.resources(Some(server)).unwrap_or_default().iter().any(|r| r.uri == uri) {
            let found = catalog.match_uri_in(Some(server), uri).unwrap_or_default();
            if found.matches.is_empty() {
                let server = server.to_owned();
                return Err(if found.skipped > 0 {
                    ToolError::MatchLimit { server }
                } else {
                    match catalog.status(&server, now).map_err(ToolError::UnknownServer)? {
                        ServerStatus {
                            status: status @ (Status::Unknown | Status::Failed | Status::Unsupported),
                            last_error,
                            ..
                        } => {
                            let failure = last_error.filter(|_| status == Status::Failed).map(|f| f.message);
                            ToolError::NoListing { server, status, failure }
                        }
                        _ => ToolError::UnlistedUri { server },
                    }
                });
            }
        }
        Ok(ReadCall {
            server: server.to_owned(),
            uri: uri.to_owned(),
            config: *config,
            deadline: now.saturating_add(config.timeout),
        })
    }

    /// [`ReadCall::new`] from the model's input as JSON text.
    pub fn from_json(
        catalog: &Catalog,
        input_json: &str,
        config: &ReadConfig,
        now: Duration,
    ) -> Result<ReadCall, ToolError> {
        ReadCall::new(catalog, &ReadInput::from_json(input_json)?, config, now)
    }

    /// The server to read from.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The URI to read.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The request's `params`: `{"uri": …}` as compact JSON text.
    pub fn params_json(&self) -> String {
        serde_json::json!({ "uri": self.uri }).to_string()
    }

    /// The read's settings.
    pub fn config(&self) -> &ReadConfig {
        &self.config
    }

    /// How long the host may still wait for the answer.
    pub fn remaining(&self, now: Duration) -> Duration {
        self.deadline.saturating_sub(now)
    }

    /// The model's output for what became of the request: the rendered contents, or the tool
    /// error (`server_error`, `transport_error`, `deadline`, `malformed_result`).
    pub fn finish(&self, outcome: Outcome<'_>) -> Result<String, ToolError> {
        let server = self.server.clone();
        match outcome {
            Outcome::Page(text) => self.render(text),
            Outcome::RpcError { code } => {
                Err(ToolError::ReadFailed { server, code, not_found: code == RESOURCE_NOT_FOUND })
            }
            Outcome::Transport => Err(ToolError::ReadTransport { server }),
            Outcome::TimedOut => Err(ToolError::ReadDeadline { server, max: self.config.timeout }),
            Outcome::TooLarge { max_bytes } => Err(ToolError::ReadTooLarge { server, max_bytes }),
            Outcome::Malformed => {
                Err(ToolError::ReadMalformed { server, reason: "the host's client refused the result" })
            }
        }
    }

    fn render(&self, text: &str) -> Result<String, ToolError> {
        let malformed = |reason| ToolError::ReadMalformed { server: self.server.clone(), reason };
        let fixed = crate::discovery::replace_lone_surrogates(text);
        let raw: RawResult<'_> = serde_json::from_str(fixed.as_deref().unwrap_or(text))
            .map_err(|_| malformed("expected {contents: [{uri, text | blob}]}"))?;
        let mut removed = 0usize;
        let mut contents = Vec::with_capacity(raw.contents.len());
        for c in &raw.contents {
            let body = match (&c.text, &c.blob) {
                (Some(t), None) => {
                    let clean = sanitize::content(t);
                    if let Cow::Owned(s) = &clean {
                        removed += t.chars().count() - s.chars().count();
                    }
                    let chars = clean.chars().count();
                    Body::Text(clean, chars)
                }
                (None, Some(b)) => Body::Blob(decoded_len(b).ok_or_else(|| malformed("a blob is not base64"))?),
                _ => return Err(malformed("a content has neither text nor blob, or both")),
            };
            contents.push(Content {
                uri: sanitize::label(&c.uri),
                mime_type: c.mime_type.as_deref().map(sanitize::label),
                body,
            });
        }
        Ok(self.layout(&contents, removed))
    }

    /// The output: the header line (what was read, each content's size, the truncation note
    /// first), then each text in content order under its own separator line, as the server wrote
    /// it (line breaks kept), within [`ReadConfig::max_output_chars`].
    fn layout(&self, contents: &[Content<'_>], removed: usize) -> String {
        let max = self.config.max_output_chars;
        let n = contents.len();
        let text_chars: usize = contents.iter().map(|c| c.body.chars()).sum();
        let whole: Vec<usize> = contents.iter().map(|c| c.body.chars()).collect();
        let untruncated = self.header(contents, removed, None, None);
        let full = untruncated.chars().count()
            + contents
                .iter()
                .enumerate()
                .filter_map(|(i, c)| c.body.text().map(|_| section_len(i, whole[i], whole[i]) + whole[i]))
                .sum::<usize>();
        if full <= max {
            let mut out = untruncated;
            for (i, c) in contents.iter().enumerate() {
                if let Some(t) = c.body.text() {
                    push_section(&mut out, i, t, whole[i], whole[i]);
                }
            }
            return out;
        }
        // Over the cap. The summaries of the contents take at most half of it (a server may send
        // thousands of parts); the header is sized with the largest figures it can hold, then
        // text fills what is left, in content order.
        let worst = Truncated { text_chars, shown_chars: text_chars, omitted_contents: n, max_output_chars: max };
        let base = self.header(&[], removed, Some(&worst), Some(n)).chars().count();
        let mut listed = 0usize;
        let mut used = base;
        for c in contents {
            let summary = serde_json::to_string(c).expect("a summary serializes").chars().count() + 1;
            if used + summary > max / 2 {
                break;
            }
            used += summary;
            listed += 1;
        }
        let more = (listed < n).then_some(n - listed);
        let mut budget =
            max.saturating_sub(self.header(&contents[..listed], removed, Some(&worst), more).chars().count());
        let mut shown = vec![None::<usize>; n];
        for (i, c) in contents[..listed].iter().enumerate() {
            if c.body.text().is_none() {
                continue;
            }
            let sep = section_len(i, whole[i], whole[i]);
            if sep > budget {
                break;
            }
            budget -= sep;
            let take = whole[i].min(budget);
            budget -= take;
            shown[i] = Some(take);
            if take < whole[i] {
                break;
            }
        }
        let shown_chars = shown.iter().flatten().sum();
        let omitted_contents =
            contents.iter().zip(&shown).filter(|(c, s)| c.body.text().is_some() && s.is_none()).count();
        let truncated = Truncated { text_chars, shown_chars, omitted_contents, max_output_chars: max };
        let mut out = self.header(&contents[..listed], removed, Some(&truncated), more);
        for (i, c) in contents.iter().enumerate() {
            if let (Some(t), Some(take)) = (c.body.text(), shown[i]) {
                let end = t.char_indices().nth(take).map_or(t.len(), |(b, _)| b);
                push_section(&mut out, i, &t[..end], take, whole[i]);
            }
        }
        debug_assert!(out.chars().count() <= max, "the truncated output fits its cap");
        out
    }

    /// The first line: `{"truncated"?, "removedChars"?, "server", "uri", "contents", "moreContents"?}`.
    fn header(
        &self,
        contents: &[Content<'_>],
        removed: usize,
        truncated: Option<&Truncated>,
        more: Option<usize>,
    ) -> String {
        let mut out = Vec::with_capacity(256);
        let mut ser = serde_json::Serializer::new(&mut out);
        let mut map = ser.serialize_map(None).expect("writing to a Vec cannot fail");
        if let Some(t) = truncated {
            map.serialize_entry("truncated", t).expect("writing to a Vec cannot fail");
        }
        if removed > 0 {
            map.serialize_entry("removedChars", &removed).expect("writing to a Vec cannot fail");
        }
        map.serialize_entry("server", &self.server).expect("writing to a Vec cannot fail");
        map.serialize_entry("uri", &self.uri).expect("writing to a Vec cannot fail");
        map.serialize_entry("contents", contents).expect("writing to a Vec cannot fail");
        if let Some(more) = more {
            map.serialize_entry("moreContents", &more).expect("writing to a Vec cannot fail");
        }
        map.end().expect("writing to a Vec cannot fail");
        String::from_utf8(out).expect("serde_json writes UTF-8")
    }
}

/// A text's separator line, with the newlines before and after it.
fn separator(i: usize, shown: usize, chars: usize) -> String {
    format!("\n--- content {} text ({shown} of {chars} characters) ---\n", i + 1)
}

fn section_len(i: usize, shown: usize, chars: usize) -> usize {
    separator(i, shown, chars).len() // ASCII
}

fn push_section(out: &mut String, i: usize, text: &str, shown: usize, chars: usize) {
    out.push_str(&separator(i, shown, chars));
    out.push_str(text);
}

/// The decoded size of standard base64 (whitespace ignored, padding optional); `None` when it is
/// not base64.
fn decoded_len(b: &str) -> Option<usize> {
    let mut n = 0usize;
    let mut pad = 0usize;
    for c in b.bytes() {
        match c {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'+' | b'/' if pad == 0 => n += 1,
            b'=' if pad < 2 => pad += 1,
            b' ' | b'\n' | b'\r' | b'\t' => {}
            _ => return None,
        }
    }
    if pad > 0 && !(n + pad).is_multiple_of(4) {
        return None;
    }
    match n % 4 {
        1 => None,
        0 => Some(n / 4 * 3),
        r => Some(n / 4 * 3 + r - 1),
    }
}

#[derive(Deserialize)]
struct RawResult<'a> {
    #[serde(borrow)]
    contents: Vec<RawContent<'a>>,
}

#[derive(Deserialize)]
struct RawContent<'a> {
    #[serde(borrow)]
    uri: Cow<'a, str>,
    #[serde(borrow, rename = "mimeType", default)]
    mime_type: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    text: Option<Cow<'a, str>>,
    #[serde(borrow, default)]
    blob: Option<Cow<'a, str>>,
}

/// One content part, sanitized; serialized as its summary in the header.
#[derive(Serialize)]
struct Content<'a> {
    uri: Cow<'a, str>,
    #[serde(rename = "mimeType", skip_serializing_if = "Option::is_none")]
    mime_type: Option<Cow<'a, str>>,
    #[serde(flatten)]
    body: Body<'a>,
}

#[derive(Serialize)]
enum Body<'a> {
    /// The sanitized text (not in the summary) and its length in characters.
    #[serde(rename = "textChars", serialize_with = "text_chars")]
    Text(Cow<'a, str>, usize),
    #[serde(rename = "blobBytes")]
    Blob(usize),
}

#[allow(clippy::ptr_arg)] // the signature serde's `serialize_with` asks for
fn text_chars<S: Serializer>(_text: &Cow<'_, str>, chars: &usize, s: S) -> Result<S::Ok, S::Error> {
    s.serialize_u64(*chars as u64)
}

impl Body<'_> {
    fn text(&self) -> Option<&str> {
        match self {
            Body::Text(t, _) => Some(t),
            Body::Blob(_) => None,
        }
    }

    fn chars(&self) -> usize {
        match self {
            Body::Text(_, n) => *n,
            Body::Blob(_) => 0,
        }
    }
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Truncated {
    text_chars: usize,
    shown_chars: usize,
    omitted_contents: usize,
    max_output_chars: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_sizes() {
        assert_eq!(decoded_len(""), Some(0));
        assert_eq!(decoded_len("QQ=="), Some(1));
        assert_eq!(decoded_len("QUI="), Some(2));
        assert_eq!(decoded_len("QUJD"), Some(3));
        assert_eq!(decoded_len("QUJDRA"), Some(4));
        assert_eq!(decoded_len("QUJD\nRA=="), Some(4));
        assert_eq!(decoded_len("Q"), None);
        assert_eq!(decoded_len("QQ=A"), None);
        assert_eq!(decoded_len("QQ="), None);
        assert_eq!(decoded_len("Q!=="), None);
    }
}
